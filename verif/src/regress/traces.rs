//! Trace-replay cases: a seeded trace of a DeepEP/paper shape through the RTL
//! and the golden model (`replay_rtl`: every packet, memory access and counter
//! checked), at hidden [`TRACE_HIDDEN`].

use super::plan::{TraceCase, TRACE_HIDDEN};
use super::{counts_file, CaseFail, Checked, Outcome};
use crate::replay_rtl::{replay_rtl, InjectOrder, RtlReplayError};
use dysharp_sim::numerics::DType;
use dysharp_sim::replay::ReplayOptions;
use dysharp_sim::trace::gen::{generate, DistSpec};

/// The distribution of a case; `None` when its counts file is absent.
fn dist(d: &str) -> Result<Option<DistSpec>, CaseFail> {
    if let Some(sel) = d.strip_prefix("counts:") {
        let Some(file) = counts_file() else {
            return Ok(None);
        };
        let spec = format!("counts:{}:{sel}", file.display());
        return spec
            .parse()
            .map(Some)
            .map_err(|e| CaseFail::error(format!("{e}")));
    }
    d.parse()
        .map(Some)
        .map_err(|e| CaseFail::error(format!("{e}")))
}

/// A `trace/SHAPE/DIST` case.
pub(crate) fn replay(t: &TraceCase, seed: u64, checked: &mut Checked) -> Result<Outcome, CaseFail> {
    let Some(spec) = dist(&t.dist)? else {
        return Ok(Outcome::Skipped(
            "no routing counts file (set DYSHARP_COUNTS or provide ../shared/data/routing/expert_counts.csv)"
                .into(),
        ));
    };
    let trace = generate(&spec, t.tokens, t.experts, t.topk, t.ep, seed)
        .map_err(|e| CaseFail::error(format!("generating the trace: {e}")))?;
    let (tokens, topk) = trace.replay_tokens();
    let opts = ReplayOptions {
        ep: t.ep,
        experts: t.experts,
        hidden: TRACE_HIDDEN,
        dtype: DType::Bf16,
        seed,
    };
    let r = replay_rtl(
        &tokens,
        topk,
        &opts,
        InjectOrder::Token,
        seed,
        false,
        |_, _| {},
    )
    .map_err(|e| match e {
        RtlReplayError::Bench(tb) => CaseFail::from(tb),
        RtlReplayError::Shape(s) => CaseFail::error(s.to_string()),
    })?;
    checked.packets = r.packets_checked;
    checked.mem_accesses = r.mem_checked;
    checked.legal_injected = r.dispatch.packets + r.combine.packets;
    checked.cycles = r.cycles;
    Ok(Outcome::Passed)
}
