//! The one registry of RTL models and configurations.
//!
//! `rtl/models.toml` lists every model: its name, top module, parameter
//! overrides and which tools use it ([`Use`]). The Verilator build
//! (`verif/build.rs`), the lint test, the regression, coverage, the RTL replay
//! and synthesis all read it through this crate, so a configuration is named
//! once. The file's format is described in its own header and in
//! docs/architecture.md ("Model registry").

pub mod wrapper;

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::OnceLock;

/// The registry file as built into this crate (`rtl/models.toml`).
pub const MODELS_TOML: &str = include_str!("../../rtl/models.toml");

/// Path of the registry file from the repository root.
pub const MODELS_TOML_PATH: &str = "rtl/models.toml";

/// Which tool takes a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Use {
    /// Built as a Verilator model by `verif/build.rs`.
    Sim,
    /// `verilator --lint-only -Wall` must be clean.
    Lint,
    /// A switch configuration of `dysharp regress` and `dysharp replay --engine rtl`.
    Regress,
    /// Also built as `<name>_cov` with line and toggle coverage.
    Coverage,
    /// Also built as `<name>_fast` (feature `speed`): the speed variant, without
    /// assertions and tracing, optimised harder (docs/perf.md).
    Speed,
    /// Also built as `<name>_mt` (feature `threads`): the checked model (assertions,
    /// tracing) evaluated by two threads (`verilator --threads 2`, docs/perf.md).
    Threads,
    /// A configuration of `dysharp area --config`.
    Synth,
    /// Its simulation model compiled with GCC profile feedback: `tools/pgo.sh` (run by
    /// `make demo` and `make test`) trains it on the quick regression, and the default
    /// build compiles it with that profile while the RTL is the one it was trained on.
    Pgo,
}

impl Use {
    /// Every use, in declaration order.
    pub const ALL: [Use; 8] = [
        Use::Sim,
        Use::Lint,
        Use::Regress,
        Use::Coverage,
        Use::Speed,
        Use::Threads,
        Use::Synth,
        Use::Pgo,
    ];

    /// The name used in `rtl/models.toml`.
    pub fn name(self) -> &'static str {
        match self {
            Use::Sim => "sim",
            Use::Lint => "lint",
            Use::Regress => "regress",
            Use::Coverage => "coverage",
            Use::Speed => "speed",
            Use::Threads => "threads",
            Use::Synth => "synth",
            Use::Pgo => "pgo",
        }
    }

    /// The name suffix of the model variant this use builds (`<name>_cov`, `<name>_fast`,
    /// `<name>_mt`); `None` for the uses that build no variant. Registry names may not end
    /// in one.
    pub fn variant_suffix(self) -> Option<&'static str> {
        match self {
            Use::Coverage => Some("_cov"),
            Use::Speed => Some("_fast"),
            Use::Threads => Some("_mt"),
            Use::Sim | Use::Lint | Use::Regress | Use::Synth | Use::Pgo => None,
        }
    }
}

impl fmt::Display for Use {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One model (a top module at one parameterisation).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// Unique name: the Verilator model's name and the synthesis configuration's.
    pub name: String,
    /// Top module (what `lint` and `synth` take).
    pub top: String,
    /// Top module of the Verilator models (`sim`, `coverage`, `speed`, `threads`) when it is not `top`: a
    /// verification wrapper of `top` from `sources` that adds observation taps.
    #[serde(default)]
    pub sim_top: Option<String>,
    /// What the configuration is for (one line).
    pub doc: String,
    /// Which tools take it.
    pub uses: Vec<Use>,
    /// Parameter overrides; the RTL's defaults apply to the rest.
    #[serde(default)]
    pub params: BTreeMap<String, i64>,
    /// Extra source files, relative to the repository root.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Build against the packages of `rtl/` only (a harness of a package).
    #[serde(default)]
    pub packages_only: bool,
    /// Clock target of synthesis and static timing, MHz (`dysharp area`); default
    /// [`DEFAULT_CLOCK_MHZ`].
    #[serde(default)]
    pub clock_mhz: Option<u32>,
}

/// The clock target of a model that names none, MHz: 150 MHz at sky130's typical corner.
pub const DEFAULT_CLOCK_MHZ: u32 = 150;

impl Model {
    /// The clock target of synthesis and static timing, MHz.
    pub fn clock_mhz(&self) -> u32 {
        self.clock_mhz.unwrap_or(DEFAULT_CLOCK_MHZ)
    }

    /// The top module of the model's Verilator builds: `sim_top`, else `top`.
    pub fn sim_top(&self) -> &str {
        self.sim_top.as_deref().unwrap_or(&self.top)
    }

    /// Whether `tool` takes this model.
    pub fn has(&self, tool: Use) -> bool {
        self.uses.contains(&tool)
    }

    /// A parameter override, if the registry sets it.
    pub fn param(&self, key: &str) -> Option<i64> {
        self.params.get(key).copied()
    }

    /// Switch ports (`NumPorts`), for the `regress` configurations.
    pub fn ports(&self) -> Option<usize> {
        self.param("NumPorts").and_then(|v| usize::try_from(v).ok())
    }

    /// Experts per port (`ExpertsPerPort`), for the `regress` configurations.
    pub fn experts_per_port(&self) -> Option<usize> {
        self.param("ExpertsPerPort")
            .and_then(|v| usize::try_from(v).ok())
    }

    /// Whether the dynamic operations are built in (`DynamicOps`, default 1; spec §5.7).
    pub fn dynamic_ops(&self) -> bool {
        self.param("DynamicOps") != Some(0)
    }

    /// The overrides as `(name, value)` strings, in name order (for `-G` flags).
    pub fn param_strings(&self) -> Vec<(String, String)> {
        self.params
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect()
    }
}

/// Why a registry file was rejected.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    /// Not valid TOML, or a field of the wrong type (the message names line and field).
    #[error("{path}: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// The TOML parser's message.
        message: String,
    },
    /// A rule of the format broken by one model.
    #[error("{path}: model `{model}`: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// The model's name.
        model: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    model: Vec<Model>,
}

/// All models, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registry {
    models: Vec<Model>,
}

fn identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

impl Registry {
    /// Parses and validates a registry; `path` names the file in errors.
    pub fn parse(text: &str, path: &str) -> Result<Self, RegistryError> {
        let file: File = toml::from_str(text).map_err(|e| RegistryError::Syntax {
            path: path.to_string(),
            message: e.to_string(),
        })?;
        let mut names = BTreeSet::new();
        for m in &file.model {
            let bad = |message: String| RegistryError::Invalid {
                path: path.to_string(),
                model: m.name.clone(),
                message,
            };
            if !identifier(&m.name) || m.name.chars().any(|c| c.is_ascii_uppercase()) {
                return Err(bad("name must be lower-case letters, digits and `_`".into()));
            }
            if let Some((u, s)) = Use::ALL
                .iter()
                .filter_map(|u| u.variant_suffix().map(|s| (u, s)))
                .find(|(_, s)| m.name.ends_with(s))
            {
                return Err(bad(format!(
                    "names ending in `{s}` are reserved for the variants of `{u}`"
                )));
            }
            if !names.insert(m.name.as_str()) {
                return Err(bad("name listed twice".into()));
            }
            if !identifier(&m.top) {
                return Err(bad(format!("top `{}` is not a module name", m.top)));
            }
            if let Some(t) = &m.sim_top {
                if !identifier(t) {
                    return Err(bad(format!("sim_top `{t}` is not a module name")));
                }
                if !m.has(Use::Sim) && !m.has(Use::Threads) {
                    return Err(bad(
                        "`sim_top` needs `sim` or `threads` (it is the Verilator model's top)"
                            .into(),
                    ));
                }
            }
            if m.uses.is_empty() {
                return Err(bad("`uses` is empty: no tool takes the model".into()));
            }
            let uses: BTreeSet<Use> = m.uses.iter().copied().collect();
            if uses.len() != m.uses.len() {
                return Err(bad("a use is listed twice".into()));
            }
            if let Some(k) = m.params.keys().find(|k| !identifier(k)) {
                return Err(bad(format!("parameter `{k}` is not an identifier")));
            }
            if m.has(Use::Coverage) && !m.has(Use::Sim) {
                return Err(bad("`coverage` needs `sim` (the coverage model is a variant of the simulation model)".into()));
            }
            if m.has(Use::Speed) && !m.has(Use::Sim) {
                return Err(bad(
                    "`speed` needs `sim` (the speed model is a variant of the simulation model)"
                        .into(),
                ));
            }
            if m.has(Use::Pgo) && !(m.has(Use::Sim) && m.has(Use::Regress)) {
                return Err(bad(
                    "`pgo` needs `sim` and `regress` (the simulation model, trained on its quick regression)"
                        .into(),
                ));
            }
            if m.has(Use::Regress) {
                if !m.has(Use::Sim) {
                    return Err(bad("`regress` needs `sim`".into()));
                }
                match (m.ports(), m.experts_per_port()) {
                    (Some(p), Some(e)) if p >= 2 && e >= 1 => {}
                    _ => {
                        return Err(bad(
                            "`regress` needs NumPorts (>= 2) and ExpertsPerPort (>= 1) in params"
                                .into(),
                        ))
                    }
                }
            }
            if let Some(s) = m
                .sources
                .iter()
                .find(|s| s.starts_with('/') || s.contains(".."))
            {
                return Err(bad(format!(
                    "source `{s}` must be a path inside the repository"
                )));
            }
        }
        let regress_ports: Vec<usize> = file
            .model
            .iter()
            .filter(|m| m.has(Use::Regress) && m.dynamic_ops())
            .filter_map(Model::ports)
            .collect();
        let distinct: BTreeSet<usize> = regress_ports.iter().copied().collect();
        if distinct.len() != regress_ports.len() {
            let m = file
                .model
                .iter()
                .filter(|m| m.has(Use::Regress) && m.dynamic_ops())
                .find(|m| {
                    regress_ports
                        .iter()
                        .filter(|&&p| Some(p) == m.ports())
                        .count()
                        > 1
                })
                .map(|m| m.name.clone())
                .unwrap_or_default();
            return Err(RegistryError::Invalid {
                path: path.to_string(),
                model: m,
                message: "two `regress` models with the dynamic operations have the same NumPorts (the RTL replay picks the model by port count)".into(),
            });
        }
        Ok(Registry { models: file.model })
    }

    /// The registry built into this crate (`rtl/models.toml`, checked by its tests).
    pub fn builtin() -> &'static Registry {
        static REG: OnceLock<Registry> = OnceLock::new();
        REG.get_or_init(|| {
            Registry::parse(MODELS_TOML, MODELS_TOML_PATH)
                .unwrap_or_else(|e| panic!("built-in registry is invalid (a build bug): {e}"))
        })
    }

    /// Every model, in file order.
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// The model of this name.
    pub fn get(&self, name: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.name == name)
    }

    /// The models that `tool` takes, in file order.
    pub fn with(&self, tool: Use) -> impl Iterator<Item = &Model> + '_ {
        self.models.iter().filter(move |m| m.has(tool))
    }

    /// Names of the models that `tool` takes, in file order.
    pub fn names(&self, tool: Use) -> Vec<&str> {
        self.with(tool).map(|m| m.name.as_str()).collect()
    }

    /// The `regress` configuration with `ports` switch ports and the dynamic operations (the
    /// one a trace replay runs on).
    pub fn for_ports(&self, ports: usize) -> Option<&Model> {
        self.with(Use::Regress)
            .find(|m| m.ports() == Some(ports) && m.dynamic_ops())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_registry_is_valid_and_names_every_tool() {
        let r = Registry::builtin();
        for u in Use::ALL {
            assert!(r.with(u).count() > 0, "no model uses {u}");
        }
        let p8 = r.for_ports(8).expect("an 8-port regress model");
        assert_eq!(p8.experts_per_port(), Some(32));
        assert!(r.get("default").is_some_and(|m| m.params.is_empty()));
    }

    #[test]
    fn every_rtl_top_and_source_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let rtl: String = std::fs::read_dir(root.join("rtl"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "sv"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .collect();
        for m in Registry::builtin().models() {
            let mut text = rtl.clone();
            for s in &m.sources {
                text.push_str(&std::fs::read_to_string(root.join(s)).unwrap());
            }
            for top in [m.top.as_str(), m.sim_top()] {
                assert!(
                    text.contains(&format!("module {top}")),
                    "{}: no module {top}",
                    m.name
                );
            }
        }
    }

    fn one(body: &str) -> Result<Registry, RegistryError> {
        Registry::parse(&format!("[[model]]\n{body}"), "t.toml")
    }

    #[test]
    fn rejects_what_the_format_forbids() {
        let cases = [
            ("name = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = []", "empty"),
            (
                "name = \"A\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\"]",
                "lower-case",
            ),
            (
                "name = \"a_cov\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\"]",
                "reserved",
            ),
            (
                "name = \"a_mt\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\"]",
                "`_mt` are reserved",
            ),
            (
                "name = \"a_fast\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\"]",
                "`_fast` are reserved",
            ),
            (
                "name = \"a\"\ntop = \"t x\"\ndoc = \"\"\nuses = [\"sim\"]",
                "module",
            ),
            (
                "name = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"lint\", \"coverage\"]",
                "needs `sim`",
            ),
            (
                "name = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\", \"regress\"]",
                "NumPorts",
            ),
            (
                "name = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\", \"sim\"]",
                "twice",
            ),
            (
                "name = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\"]\nsources = [\"../x.sv\"]",
                "inside",
            ),
            (
                "name = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\"]\nparams = { \"a-b\" = 1 }",
                "identifier",
            ),
            (
                "name = \"a\"\ntop = \"t\"\nsim_top = \"t-b\"\ndoc = \"\"\nuses = [\"sim\"]",
                "sim_top",
            ),
            (
                "name = \"a\"\ntop = \"t\"\nsim_top = \"t_tb\"\ndoc = \"\"\nuses = [\"lint\"]",
                "needs `sim` or `threads`",
            ),
            (
                "name = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\", \"pgo\"]",
                "`pgo` needs `sim` and `regress`",
            ),
        ];
        for (body, want) in cases {
            let e = one(body).unwrap_err().to_string();
            assert!(e.contains(want), "{body:?}: {e}");
            assert!(e.starts_with("t.toml"), "{e}");
        }
        let e = one("name = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"fly\"]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("fly") && e.contains("line"), "{e}");
        let e = one("name = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\"]\ncolour = 1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("colour"), "{e}");
        let dup = "[[model]]\nname = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\"]\n\
                   [[model]]\nname = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\"]\n";
        assert!(Registry::parse(dup, "t")
            .unwrap_err()
            .to_string()
            .contains("twice"));
        let two8 = "[[model]]\nname = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\", \"regress\"]\nparams = { NumPorts = 8, ExpertsPerPort = 4 }\n\
                    [[model]]\nname = \"b\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\", \"regress\"]\nparams = { NumPorts = 8, ExpertsPerPort = 2 }\n";
        assert!(Registry::parse(two8, "t")
            .unwrap_err()
            .to_string()
            .contains("same NumPorts"));
        // A static model (DynamicOps = 0) may share a port count: the replay never picks it.
        let stat = "[[model]]\nname = \"a\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\", \"regress\"]\nparams = { NumPorts = 8, ExpertsPerPort = 2 }\n\
                    [[model]]\nname = \"b\"\ntop = \"t\"\ndoc = \"\"\nuses = [\"sim\", \"regress\"]\nparams = { NumPorts = 8, ExpertsPerPort = 2, DynamicOps = 0 }\n";
        let r = Registry::parse(stat, "t").unwrap();
        assert_eq!(r.for_ports(8).map(|m| m.name.as_str()), Some("a"));
        assert!(!r.get("b").unwrap().dynamic_ops());
    }

    #[test]
    fn lookups() {
        let r = one("name = \"a\"\ntop = \"t\"\ndoc = \"d\"\nuses = [\"sim\", \"regress\"]\nparams = { NumPorts = 4, ExpertsPerPort = 2, Z = -1 }").unwrap();
        let m = r.get("a").unwrap();
        assert_eq!(r.for_ports(4), Some(m));
        assert_eq!(r.for_ports(8), None);
        assert_eq!(r.names(Use::Sim), ["a"]);
        assert!(r.names(Use::Synth).is_empty());
        assert_eq!(
            m.param_strings(),
            [
                ("ExpertsPerPort".to_string(), "2".to_string()),
                ("NumPorts".into(), "4".into()),
                ("Z".into(), "-1".into())
            ]
        );
    }
}
