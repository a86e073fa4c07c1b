//! Standard output and error for every command, quiet when the reader goes away.
//!
//! Rust ignores `SIGPIPE`, so a write to a closed pipe (`dysharp golden run s.json | head -1`)
//! fails with `BrokenPipe`, and `print!` turns that failure into a panic. Commands print through
//! [`print`] and [`println`] instead: once standard output is closed, further output is
//! dropped and the command ends normally, with the exit code it would have had; [`closed`]
//! lets a long command stop early. [`eprintln`] never fails (a closed standard error is not
//! worth a panic either).

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output and flushes it. A closed pipe is not an error: it is
/// remembered, and this and later output is dropped. Other write errors (a full disk behind a
/// redirection) are returned.
pub fn print(text: &str) -> std::io::Result<()> {
    if closed() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        r => r,
    }
}

/// [`print`] with a line end.
pub fn println(text: &str) -> std::io::Result<()> {
    print(&format!("{text}\n"))
}

/// Whether standard output has been closed by its reader.
pub fn closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Writes a line to standard error, ignoring any failure.
pub fn eprintln(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}

/// Writes `text` to standard output through [`print`]; a write error other than a closed pipe
/// (a full disk behind a redirection) ends the command with a message and exit code 2.
pub fn say(text: &str) {
    if let Err(e) = print(text) {
        eprintln(&format!("error: cannot write standard output: {e}"));
        std::process::exit(2);
    }
}

/// `print!` through [`say`]: quiet once standard output is closed.
macro_rules! out {
    ($($t:tt)*) => { $crate::output::say(&format!($($t)*)) };
}

/// `println!` through [`say`]: quiet once standard output is closed.
macro_rules! outln {
    ($($t:tt)*) => { $crate::output::say(&format!("{}\n", format_args!($($t)*))) };
}
