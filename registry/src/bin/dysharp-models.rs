//! `dysharp-models [USE]`: the names of the models in the registry (`rtl/models.toml`, the
//! copy built into this crate) that the tool `USE` takes, one per line; every model without
//! `USE`. For scripts: `tools/pgo.sh` trains the models of `dysharp-models pgo`.

use dysharp_registry::{Registry, Use};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let uses = Use::ALL.map(Use::name).join(", ");
    let reg = Registry::builtin();
    match args.as_slice() {
        [] => {
            for m in reg.models() {
                println!("{}", m.name);
            }
            ExitCode::SUCCESS
        }
        [h] if h == "-h" || h == "--help" => {
            println!(
                "usage: dysharp-models [USE]\n\nThe models of rtl/models.toml that USE takes \
                 (every model without USE), one per line.\nUSE: one of {uses}"
            );
            ExitCode::SUCCESS
        }
        [u] => match Use::ALL.into_iter().find(|x| x.name() == u) {
            Some(tool) => {
                for n in reg.names(tool) {
                    println!("{n}");
                }
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("dysharp-models: no use `{u}` in rtl/models.toml (uses: {uses})");
                ExitCode::from(2)
            }
        },
        _ => {
            eprintln!("dysharp-models: expected at most one argument, a use ({uses}); --help");
            ExitCode::from(2)
        }
    }
}
