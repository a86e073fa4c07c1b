//! What `dysharp area` synthesizes: a configuration of the model registry with `--param`
//! overrides, the RTL file list of `dysharp.core`, and the blocks of the elaborated hierarchy.

use super::AreaError;
use dysharp_registry::{Registry, Use};
use std::collections::BTreeMap;
use std::path::Path;

/// A configuration: a registry model with its parameters after overrides.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Registry name (`default`, `top_p8`, ...).
    pub name: String,
    /// Top module.
    pub top: String,
    /// Parameter overrides (`-G`); the RTL's defaults apply to the rest.
    pub params: BTreeMap<String, i64>,
    /// Another design's sources (`--rtl`), in compile order; empty for the project's RTL.
    pub external: Vec<std::path::PathBuf>,
    /// Clock target of the mapping and of static timing, MHz (the registry's `clock_mhz`, or
    /// `--clock-mhz`).
    pub clock_mhz: f64,
}

/// A SystemVerilog simple identifier: a letter or `_`, then letters, digits and `_`.
fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses `K=V` (an identifier and an integer); `flag` names the option in errors.
pub fn parse_kv(s: &str, flag: &'static str) -> Result<(String, String), AreaError> {
    let bad = |msg: &str| AreaError::Flag {
        flag,
        msg: format!("`{s}`: {msg}"),
    };
    let (k, v) = s.split_once('=').ok_or_else(|| bad("expected K=V"))?;
    let k = k.trim();
    if !is_ident(k) {
        return Err(bad("the parameter name is not an identifier"));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

/// Parses an integer parameter value; `flag` names the option in errors.
pub fn parse_value(k: &str, v: &str, flag: &'static str) -> Result<i64, AreaError> {
    v.parse::<i64>().map_err(|_| AreaError::Flag {
        flag,
        msg: format!("`{k}={v}`: the value is not an integer"),
    })
}

fn apply(params: &mut BTreeMap<String, i64>, overrides: &[String]) -> Result<(), AreaError> {
    for o in overrides {
        let (k, v) = parse_kv(o, "param")?;
        let v = parse_value(&k, &v, "param")?;
        params.insert(k, v);
    }
    Ok(())
}

/// Another design (`--rtl FILES --top MODULE`) with `overrides` (`K=V`) as its parameters; its
/// configuration is called `rtl-<top>`.
pub fn external(
    files: &[std::path::PathBuf],
    top: &str,
    overrides: &[String],
) -> Result<Config, AreaError> {
    if !is_ident(top) {
        return Err(AreaError::Flag {
            flag: "top",
            msg: format!("`{top}` is not a module name"),
        });
    }
    if let Some(f) = files.iter().find(|f| !f.is_file()) {
        return Err(AreaError::Flag {
            flag: "rtl",
            msg: format!("{}: no such file", f.display()),
        });
    }
    let mut params = BTreeMap::new();
    apply(&mut params, overrides)?;
    Ok(Config {
        name: format!("rtl-{top}"),
        top: top.to_string(),
        params,
        external: files.to_vec(),
        clock_mhz: f64::from(dysharp_registry::DEFAULT_CLOCK_MHZ),
    })
}

/// The sources to elaborate, relative to the project root: the project's RTL (`dysharp.core`),
/// or an external design's files copied to `target/area/rtl-<top>/src/` (Yosys reads files
/// only under the folder it runs in; a file's position in the list is kept in its name; a
/// header, `.svh` or `.vh`, keeps its own name for the `include`s that name it).
pub fn sources(root: &Path, cfg: &Config) -> Result<Vec<String>, AreaError> {
    if cfg.external.is_empty() {
        return rtl_files(root);
    }
    let dir = format!("target/area/{}/src", cfg.name);
    let _ = std::fs::remove_dir_all(root.join(&dir));
    std::fs::create_dir_all(root.join(&dir)).map_err(|e| AreaError::Io {
        path: dir.clone(),
        err: e,
    })?;
    let mut out = Vec::new();
    for (i, f) in cfg.external.iter().enumerate() {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        // a header is reached through `include` from the files beside it: its own name, not
        // a source of its own
        let header = name.ends_with(".svh") || name.ends_with(".vh");
        let rel = if header {
            format!("{dir}/{name}")
        } else {
            format!("{dir}/{i:03}-{name}")
        };
        std::fs::copy(f, root.join(&rel)).map_err(|e| AreaError::Io {
            path: f.display().to_string(),
            err: e,
        })?;
        if !header {
            out.push(rel);
        }
    }
    Ok(out)
}

/// The registry model `name` (it must be a `synth` model) with `overrides` (`K=V`) applied.
pub fn resolve(name: &str, overrides: &[String]) -> Result<Config, AreaError> {
    let reg = Registry::builtin();
    let synth = reg.names(Use::Synth).join(", ");
    let model = reg
        .get(name)
        .filter(|m| m.has(Use::Synth))
        .ok_or_else(|| AreaError::Flag {
            flag: "config",
            msg: format!(
                "`{name}` is not a synthesis configuration of rtl/models.toml (one of: {synth})"
            ),
        })?;
    let mut params = model.params.clone();
    apply(&mut params, overrides)?;
    Ok(Config {
        name: model.name.clone(),
        top: model.top.clone(),
        params,
        external: Vec::new(),
        clock_mhz: f64::from(model.clock_mhz()),
    })
}

/// The RTL sources in compile order: the `rtl` fileset of `dysharp.core`.
pub fn rtl_files(root: &Path) -> Result<Vec<String>, AreaError> {
    let core = root.join("dysharp.core");
    let text = std::fs::read_to_string(&core).map_err(|e| AreaError::Io {
        path: core.display().to_string(),
        err: e,
    })?;
    let files: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter(|f| f.starts_with("rtl/") && f.ends_with(".sv"))
        .map(str::to_string)
        .collect();
    if files.is_empty() {
        return Err(AreaError::Parse {
            path: core.display().to_string(),
            msg: "no rtl/*.sv files in its filesets".into(),
        });
    }
    Ok(files)
}

/// A group of identical instances (the same module at the same place in every port's
/// generate loop), synthesized once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Short id used for file names (`b00`, `b01`, ...).
    pub id: String,
    /// Display name: the instance path without generate scopes and `u_` (`switch.req_parser`).
    pub name: String,
    /// Module definition (`dysharp_parser`).
    pub module: String,
    /// The representative instance's elaborated module (the first port's).
    pub rep: String,
    /// Instance path with generate indices replaced by `*`.
    pub path: String,
    /// Instances in the whole design.
    pub instances: usize,
    /// Index of the parent block (none for the top).
    pub parent: Option<usize>,
}

/// Module names of a Yosys `ls` listing.
pub fn parse_ls(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut on = false;
    for l in text.lines() {
        if l.trim_end().ends_with("modules:") {
            on = true;
            continue;
        }
        if on {
            if l.trim().is_empty() {
                if !out.is_empty() {
                    break;
                }
                continue;
            }
            if !l.starts_with("  ") || l.starts_with("   ") {
                break;
            }
            out.push(l.trim().to_string());
        }
    }
    out
}

fn split(m: &str) -> (&str, &str) {
    m.split_once('$').unwrap_or((m, m))
}

fn normalize(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '[' {
            let mut idx = String::new();
            while let Some(&d) = chars.peek() {
                if d == ']' {
                    break;
                }
                idx.push(d);
                chars.next();
            }
            if idx.chars().all(|d| d.is_ascii_digit()) && !idx.is_empty() {
                out.push('*');
            } else {
                out.push_str(&idx);
            }
        }
    }
    out
}

fn display_name(path: &str, top: &str) -> String {
    let parts: Vec<&str> = path
        .split('.')
        .skip(1)
        .filter(|p| !p.starts_with("gen"))
        .map(|p| p.strip_prefix("u_").unwrap_or(p))
        .collect();
    if parts.is_empty() {
        top.strip_prefix("dysharp_").unwrap_or(top).to_string()
    } else {
        parts.join(".")
    }
}

/// The block (its [`Block::path`]) an elaborated module belongs to: its instance path with
/// generate indices replaced by `*`.
pub fn block_path(module: &str) -> String {
    normalize(split(module).1)
}

/// Groups the elaborated modules into blocks: the top first, then depth-first in path order.
pub fn blocks(modules: &[String], top: &str) -> Vec<Block> {
    // path -> module name, for every instance
    let by_path: BTreeMap<String, &String> = modules
        .iter()
        .map(|m| (split(m).1.to_string(), m))
        .collect();
    let mut groups: BTreeMap<String, (String, String, usize)> = BTreeMap::new();
    for (path, m) in &by_path {
        let key = normalize(path);
        let e = groups
            .entry(key)
            .or_insert_with(|| (split(m).0.to_string(), (*m).clone(), 0));
        e.2 += 1;
    }
    let parent_of = |norm: &str| -> Option<String> {
        let mut p = norm.to_string();
        while let Some(i) = p.rfind('.') {
            p.truncate(i);
            if groups.contains_key(&p) {
                return Some(p);
            }
        }
        None
    };
    // depth-first order
    let mut order: Vec<String> = Vec::new();
    fn visit(
        key: &str,
        groups: &BTreeMap<String, (String, String, usize)>,
        parent_of: &dyn Fn(&str) -> Option<String>,
        order: &mut Vec<String>,
    ) {
        order.push(key.to_string());
        for k in groups.keys() {
            if parent_of(k).as_deref() == Some(key) {
                visit(k, groups, parent_of, order);
            }
        }
    }
    for k in groups.keys() {
        if parent_of(k).is_none() {
            visit(k, &groups, &parent_of, &mut order);
        }
    }
    let index: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    order
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let (module, rep, n) = &groups[k];
            Block {
                id: format!("b{i:02}"),
                name: display_name(k, top),
                module: module.clone(),
                rep: rep.clone(),
                path: k.clone(),
                instances: *n,
                parent: parent_of(k).map(|p| index[p.as_str()]),
            }
        })
        .collect()
}

/// A Yosys selection pattern that matches exactly `module` (`[` and `]` are glob characters
/// in Yosys patterns, so they become `?`).
pub fn module_glob(module: &str) -> String {
    module.replace(['[', ']'], "?")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_ports_into_blocks() {
        let ls = "\n5 modules:\n  dysharp_fifo$dysharp_top.u_switch.gen_port[0].u_q\n  dysharp_fifo$dysharp_top.u_switch.gen_port[1].u_q\n  dysharp_switch$dysharp_top.u_switch\n  dysharp_top\n  dysharp_hub$dysharp_top.gen_hub[0].u_hub\n\n";
        let m = parse_ls(ls);
        assert_eq!(m.len(), 5);
        let b = blocks(&m, "dysharp_top");
        assert_eq!(b[0].name, "top");
        assert_eq!(b[0].parent, None);
        let q = b.iter().find(|x| x.name == "switch.q").unwrap();
        assert_eq!(q.instances, 2);
        assert_eq!(q.module, "dysharp_fifo");
        assert_eq!(b[q.parent.unwrap()].name, "switch");
        assert_eq!(
            b[b.iter().position(|x| x.name == "hub").unwrap()].parent,
            Some(0)
        );
        assert_eq!(module_glob("a$b[0].c"), "a$b?0?.c");
    }

    #[test]
    fn overrides_and_bad_flags() {
        let c = resolve("top_p4", &["NumPorts=2".into()]).unwrap();
        assert_eq!(c.params["NumPorts"], 2);
        assert_eq!(c.top, "dysharp_top");
        assert!(resolve("nope", &[])
            .unwrap_err()
            .to_string()
            .contains("--config"));
        assert!(resolve("top_p4", &["x".into()])
            .unwrap_err()
            .to_string()
            .contains("--param"));
        assert!(resolve("top_p4", &["A=b".into()])
            .unwrap_err()
            .to_string()
            .contains("integer"));
        assert!(resolve("fp_harness", &[]).is_err());
    }
}
