//! The agent's side of the door: inside a sandbox, `baton` is a relay. It sends its command
//! line and working folder, then its standard input (when the command reads any), and writes
//! what comes back to its own output and error, ending as the command ended.

use std::ffi::OsStr;
use std::io::Write;

use crate::protocol::{DoorRequest, DoorStream, EXIT, STDERR, STDOUT, pass_on, read_frame};

/// Relays the command line `argv` (after the program's name), run in `cwd`, to the door at
/// `at` ([`crate::DOOR_ENV`]'s value), passing this process's standard input on when
/// `reads_input`: the command's exit status, or why it could not be relayed.
pub fn relay(at: &OsStr, argv: Vec<String>, cwd: String, reads_input: bool) -> Result<i32, String> {
    let mut stream = DoorStream::connect(at).map_err(|e| {
        format!(
            "this agent reaches Baton through its attempt's door ({}), which does not answer: \
             {e}. Has the attempt ended?",
            at.to_string_lossy()
        )
    })?;
    let mut knock = serde_json::to_vec(&DoorRequest { argv, cwd }).expect("JSON serialises");
    knock.push(b'\n');
    stream
        .write_all(&knock)
        .map_err(|e| format!("cannot knock at the door: {e}"))?;
    match (reads_input, stream.try_clone()) {
        // The command's input, as it comes, then its end.
        (true, Ok(mut to_door)) => {
            std::thread::spawn(move || {
                pass_on(&mut std::io::stdin().lock(), &mut to_door);
                to_door.end_writing();
            });
        }
        // A command that reads nothing leaves this process's input to whoever else reads it.
        _ => stream.end_writing(),
    }
    let mut from_door = std::io::BufReader::new(stream);
    loop {
        match read_frame(&mut from_door) {
            Ok(Some((STDOUT, bytes))) => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&bytes).and_then(|_| out.flush());
            }
            Ok(Some((STDERR, bytes))) => {
                let _ = std::io::stderr().lock().write_all(&bytes);
            }
            Ok(Some((EXIT, bytes))) => {
                return Ok(<[u8; 4]>::try_from(bytes.as_slice()).map_or(1, i32::from_be_bytes));
            }
            Ok(Some(_)) => continue,
            Ok(None) => return Err("the door closed before the command ended".into()),
            Err(e) => return Err(format!("the door failed: {e}")),
        }
    }
}
