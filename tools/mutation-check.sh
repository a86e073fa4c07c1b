#!/bin/bash
# Mutation check of the regression: plants single-line bugs in a copy of the RTL and runs the
# quick regression of one model on each; every mutation must make at least one case fail.
#
#   tools/mutation-check.sh [MODEL]        (default top_p4; needs tools/setup.sh done)
#   tools/mutation-check.sh switch_p4      (the response-path mutants: the switch-level bench)
#   tools/mutation-check.sh top_p4_static  (a switch without the dynamic ops must refuse them)
#
# MUT_ONLY="name ..." runs only those mutations. Work happens in a copy of the tree under
# $MUT_DIR (default /tmp/dysharp-mutants); the working tree is never modified. Prints one line per mutation and exits 1 if one survived.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-top_p4}
work=${MUT_DIR:-/tmp/dysharp-mutants}
mkdir -p "$work/tree"
(cd "$here" && tar --exclude=./target --exclude=./.git --exclude=./.tools -cf - .) | tar -xf - -C "$work/tree"
ln -sfn "$here/.tools" "$work/tree/.tools"
cd "$work/tree" || exit 2
export CARGO_TARGET_DIR="$work/target" DYSHARP_MODELS="$model"

# name | file | perl substitution (applied once, must change the file) [| models where the
# mutant differs from the design: others skip it, e.g. a bug in the multi-line memory beat path
# is an equivalent mutant on top_p4, whose MemLines is 1]
tops="top_p4 top_p8 top_p16"      # the hub and the FP arithmetic exist only under dysharp_top
switches="switch_p4 switch_p8"   # the response path is only driven adversarially there
dynamic="$tops $switches"        # the models with the dynamic operations (target lists)
mutations=(
  "dup_check|rtl/dysharp_parser.sv|s/c\.dup = 1'b1;/c.dup = c.dup;/g|$dynamic"
  # The egress's pruning drops a replica's last target flit when the request's last flit completes
  # two (only where a port has more than eight experts: top_p8, top_p16).
  "prune_flush|rtl/dysharp_sw_prune.sv|s/flush_q <= 1'b1;/flush_q <= 1'b0;/|top_p8 top_p16"
  # A switch without the dynamic operations (spec §5.7) that lets them through.
  "static_dyn|rtl/dysharp_parser.sv|s/\(DynamicOps \x7c\x7c !op_is_dyn\(h\.opcode\)\)/1'b1/|top_p4_static"
  "alloc_ctr|rtl/dysharp_hub_issue.sv|s/ctr_q\[job_local_q\] \+ 32'd1;/ctr_q[job_local_q] + 32'd2;/|$tops"
  "range_err|rtl/dysharp_hub_issue.sv|s/ErrRange:    err_q\[1\] <= err_q\[1\] \+ 32'd1;/ErrRange:    err_q[1] <= err_q[1];/|$tops"
  "alloc_err|rtl/dysharp_hub_issue.sv|s/ErrAlloc:    err_q\[2\] <= err_q\[2\] \+ 32'd1;/ErrAlloc:    err_q[2] <= err_q[2];/|$tops"
  # The AL-TLB's fill pointer never advances: every fill of a set takes its way 0.
  "tlb_ptr|rtl/dysharp_al_tlb.sv|s/ptr_q\[fl_set\] <= way_inc\(fl_way\);/ptr_q[fl_set] <= fl_way;/|$tops"
  # A hit that takes the job's own LIdx field instead of the TLB RAM's read.
  "tlb_lidx|rtl/dysharp_hub_walk.sv|s/res_out\.lidx = tlb_lidx;/res_out.lidx = res_q.lidx;/|$tops"
  "min_nan|rtl/dysharp_fp_pkg.sv|s/(fp_min.*?else if \(fp_is_nan\(b\[30:0\]\)\)\s+r = )a;/\${1}b;/s|$tops top_p4_static"
  # The response path (issue 13): error counting, partial matching, the bounded wait.
  "orphan_port|rtl/dysharp_switch.sv|s/\(c == int'\(ErrOpcode\)\) && orphan\[p\]\)/(c == int'(ErrOpcode)) \&\& orphan[(p + 1) % NumPorts])/|$switches"
  "tmo_count|rtl/dysharp_switch.sv|s/tmo_q <= tmo_q \+ 32'\(inc\);/tmo_q <= tmo_q;/|$switches"
  "part_dup|rtl/dysharp_reduce_rx.sv|s/exp_i\[rq\]\[e\] &&\s+!got_i\[rq\]\[e\]\)/exp_i[rq][e])/|$switches"
  "part_len|rtl/dysharp_reduce_rx.sv|s/\(ph.len != len_i\[rq\]\[rx_match_i\]\)/1'b0/|$switches"
  "tmo_src|rtl/dysharp_reduce_share.sv|s/pick_tmo \? lowest_f\(p_missing\)/pick_tmo ? lowest_f(exp_q[pick_i])/|$switches"
  "tmo_free|rtl/dysharp_reduce_share.sv|s/\(issue && issue_last && !pick_tmo\)/(issue \&\& issue_last)/|$switches"
  "beat_strb|rtl/dysharp_hub_issue.sv|s/be_strb_f\(job_be_i,\s*line_t'\(32'\(line_q\) \+ i\)\)/be_strb_f(job_be_i, line_q)/|top_p8 top_p16"
  # A RAM-backed queue that lets its output register go while the output is stalled: the
  # queue's own checks (a_out_stable, the shadow queue) and the scoreboard see it. The read side
  # dysharp_ram_prefetch serves the parsers' tail buffers; the FIFO banks (crosspoint queues and
  # the hub's payload FIFO) have the same logic as bit vectors over their queues (xp_bank_keep).
  "xp_keep|rtl/dysharp_ram_prefetch.sv|s/\(ov_q \? !pop : move\);/(ov_q ? 1'b0 : move);/|$dynamic top_p4_static"
  "xp_bank_keep|rtl/dysharp_fifo_bank.sv|s/= ft \x7c \(ov_q & ~pop\) \x7c \(~ov_q & move\);/= ft \x7c (~ov_q \& move);/|$dynamic top_p4_static"
  # A crosspoint queue whose RAM read pointer does not advance: every word after a queue's first
  # read repeats an older one.
  "xp_bank_rptr|rtl/dysharp_fifo_bank.sv|s/rd_ptr_q\[i\] <= \(32'\(rd_ptr_q\[i\]\) == RamDepth - 1\) \? '0 : rd_ptr_q\[i\] \+ ptr_t'\(1\);/rd_ptr_q[i] <= rd_ptr_q[i];/|$dynamic top_p4_static"
  # A fall-through FIFO (the hub's payload FIFO) whose push skips the RAM while an older word
  # stays behind (held, not popped): the two leave out of order.
  "ft_order|rtl/dysharp_fifo_bank.sv|s/\(cnt_q\[i\] == cnt_t'\(1\) && pop\[i\]\)/(cnt_q[i] == cnt_t'(1))/|$tops"
  # A parser tail buffer that starts reading a frame only after its check stage: its first tail
  # flit is one cycle late (the forwarders' and the parser's own stream checks see it).
  "tail_early|rtl/dysharp_parser.sv|s/ \x7c\x7c \(chk_good && \(chk_ntail_q != '0\)\);/;/|$dynamic top_p4_static"
  # Every beat of a load-reduce accumulated into the first row of accumulators (a wrong row
  # index; equivalent to the design where a reduction is one row, as on top_p4's single lines).
  "acc_line|rtl/dysharp_hub_rsp.sv|s/acc_row = .bits\(acc_row\)'\(32'\(tag_i.line\) \/ MemLines\);/acc_row = '0;/|top_p8 top_p16"
  # The payload banks read at the buffer's first row whatever the job's line.
  "pay_row|rtl/dysharp_hub_rx.sv|s/ \+ 32'\(pay_line_i\) \/ MemLines\);/);/|$tops"
  # The payload banks read at the job's current line instead of its next: with the registered
  # read, every beat after a job's first carries the lines of the beat before.
  "pay_next|rtl/dysharp_hub_issue.sv|s/assign pay_line_o  = line_d;/assign pay_line_o  = line_q;/|$tops"
  # The reduction pipeline's flits not counted in the result FIFO's credits: it overflows when
  # the requester's stream stalls.
  "acc_credit|rtl/dysharp_reduce_share.sv|s/acc_infl = acc_infl \+ .bits\(acc_infl\)'\(pv_q\[s\]\);/acc_infl = acc_infl;/|$switches"
  # The AL-TLB's set counted full when its first way is valid, not its last: fills evict early.
  "tlb_full|rtl/dysharp_al_tlb.sv|s/fl_found = !valid_q\[ent_f\(fl_set, way_t'\(Ways - 1\)\)\];/fl_found = !valid_q[ent_f(fl_set, way_t'(0))];/|$tops"
)

survived=0
for m in "${mutations[@]}"; do
  IFS='|' read -r name file expr models <<<"$m"
  if [ -n "${MUT_ONLY:-}" ] && [[ " $MUT_ONLY " != *" $name "* ]]; then
    continue
  fi
  if [ -n "${models:-}" ] && [[ " $models " != *" $model "* ]]; then
    echo "$name: skipped (absent from, or equivalent to the design on, $model; meaningful on $models)"
    continue
  fi
  cp "$file" "$work/orig"
  perl -0pi -e "$expr" "$file"
  if cmp -s "$file" "$work/orig"; then
    echo "$name: the mutation no longer applies (RTL changed): update tools/mutation-check.sh"
    survived=1
    continue
  fi
  if ! cargo build --release -q 2>"$work/build-$name.log"; then
    echo "$name: build failed, see $work/build-$name.log"
    cp "$work/orig" "$file"
    survived=1
    continue
  fi
  "$CARGO_TARGET_DIR/release/dysharp" regress --quick --only "$model" --jobs 1 >"$work/run-$name.log" 2>&1
  # Only the cases of $model itself: `--only top_p4` also selects top_p4_static's cases, whose
  # model is not built here and which fail for that reason alone.
  failing=$(grep '^FAIL ' "$work/run-$name.log" | awk -v m="$model" '$2 ~ ("/" m "$") {print $2}' | tr '\n' ' ')
  if [ -n "$failing" ]; then
    echo "$name: killed by $failing"
  else
    echo "$name: SURVIVED (log: $work/run-$name.log)"
    survived=1
  fi
  cp "$work/orig" "$file"
done
exit $survived
