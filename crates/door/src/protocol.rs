//! The door's protocol, on both sides: where the door is inside a sandbox and how the agent's
//! side reaches it ([`DoorStream`]), the first line it sends ([`DoorRequest`]), and the frames that
//! come back ([`write_frame`], [`read_frame`]): one byte of kind ([`STDOUT`], [`STDERR`],
//! [`EXIT`]), four of length (big-endian), then the bytes; the exit frame's are the status as
//! four bytes.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use baton_core::network::Network;
use serde::{Deserialize, Serialize};

/// Inside the sandbox: where the door is, the loopback address bridged to it or its socket's
/// path (the agent's `baton` relays to it when it is set).
pub const DOOR_ENV: &str = "BATON_DOOR";
/// On the supervisor's side: the agent a command came from (the CLI forces it as the caller).
pub const CALLER_ENV: &str = "BATON_DOOR_AGENT";
/// On the supervisor's side: the task the agent works.
pub const TASK_ENV: &str = "BATON_DOOR_TASK";
/// On the supervisor's side: `1` when the agent only reads (a team's judge), and the command
/// may run no operation that changes anything.
pub const READS_ONLY_ENV: &str = "BATON_DOOR_READS_ONLY";
/// On the supervisor's side: the agent's working folder, where the paths its commands name
/// must stay (what its sandbox lets it write), not the whole project.
pub const WORKDIR_ENV: &str = "BATON_DOOR_WORKDIR";
/// On the supervisor's side: the file descriptor the command writes what it refused to, one
/// line each ([`REPORT_FD`]).
pub const REPORT_ENV: &str = "BATON_DOOR_REPORT";
/// The descriptor [`REPORT_ENV`] names.
pub const REPORT_FD: i32 = 3;
/// Where the door's folder is inside the sandbox (on its private `/tmp`).
pub const INSIDE: &str = "/tmp/baton";
/// The socket's name in the door's folder.
pub const SOCKET: &str = "door";

pub const STDOUT: u8 = 1;
pub const STDERR: u8 = 2;
pub const EXIT: u8 = 3;

/// The loopback port inside a sandbox with a network of its own that its first command bridges
/// to the door's socket: each sandbox has its own loopback, so one number serves them all.
pub const INSIDE_PORT: u16 = 3127;

/// Where a sandboxed agent reaches its door ([`DOOR_ENV`]): the bridged loopback port where the
/// sandbox has a network of its own (its agent may make no Unix socket), the socket's path
/// under `network = "open"` (no loopback of its own to listen on).
pub fn inside_address(network: Network) -> String {
    match bridged(network) {
        false => Path::new(INSIDE).join(SOCKET).display().to_string(),
        true => format!("127.0.0.1:{INSIDE_PORT}"),
    }
}

/// Whether a sandbox with `network` reaches its door over its own loopback (it has one: every
/// network but the machine's), the one rule [`inside_address`] and the sandbox's bridge follow.
pub fn bridged(network: Network) -> bool {
    network != Network::Open
}

/// The agent's connection to its door: the door's socket, or (where the agent may make no
/// Unix socket) the loopback port inside the sandbox that its first command bridges to it.
pub enum DoorStream {
    Unix(UnixStream),
    Tcp(std::net::TcpStream),
}

impl DoorStream {
    /// Connects to the door [`DOOR_ENV`] names: `127.0.0.1:PORT`, or a socket's path.
    pub fn connect(at: &std::ffi::OsStr) -> std::io::Result<DoorStream> {
        let bridged = at
            .to_str()
            .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
            .filter(|a| a.ip().is_loopback());
        Ok(match bridged {
            Some(address) => DoorStream::Tcp(std::net::TcpStream::connect(address)?),
            None => DoorStream::Unix(UnixStream::connect(at)?),
        })
    }

    pub fn try_clone(&self) -> std::io::Result<DoorStream> {
        Ok(match self {
            DoorStream::Unix(s) => DoorStream::Unix(s.try_clone()?),
            DoorStream::Tcp(s) => DoorStream::Tcp(s.try_clone()?),
        })
    }

    /// Says the command's input has ended; its output still comes.
    pub fn end_writing(&self) {
        let _ = match self {
            DoorStream::Unix(s) => s.shutdown(std::net::Shutdown::Write),
            DoorStream::Tcp(s) => s.shutdown(std::net::Shutdown::Write),
        };
    }
}

impl Read for DoorStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            DoorStream::Unix(s) => s.read(buf),
            DoorStream::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for DoorStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            DoorStream::Unix(s) => s.write(buf),
            DoorStream::Tcp(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            DoorStream::Unix(s) => s.flush(),
            DoorStream::Tcp(s) => s.flush(),
        }
    }
}

/// What the agent's `baton` sends first, as one line of JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DoorRequest {
    /// The command line after the program's name.
    pub argv: Vec<String>,
    /// The folder it was run in (inside the sandbox; the same path outside for the worktree).
    pub cwd: String,
}

/// Copies `from` to `to` until `from` ends (true) or `to` is gone (false), through a buffer:
/// not `std::io::copy`, whose `splice` from a socket into a pipe waits for the socket holding
/// the pipe's lock, so the program reading the pipe could not even exit.
pub fn pass_on(from: &mut impl Read, to: &mut impl Write) -> bool {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) => return true,
            Ok(n) => {
                if to.write_all(&buffer[..n]).and_then(|_| to.flush()).is_err() {
                    return false;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return true,
        }
    }
}

/// Writes one frame.
pub fn write_frame(out: &mut impl Write, kind: u8, bytes: &[u8]) -> std::io::Result<()> {
    let mut frame = Vec::with_capacity(5 + bytes.len());
    frame.push(kind);
    frame.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    frame.extend_from_slice(bytes);
    out.write_all(&frame)?;
    out.flush()
}

/// Reads one frame; `None` at the end of the stream.
pub fn read_frame(from: &mut impl Read) -> std::io::Result<Option<(u8, Vec<u8>)>> {
    let mut head = [0u8; 5];
    match from.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let mut bytes = vec![0u8; len];
    from.read_exact(&mut bytes)?;
    Ok(Some((head[0], bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_as_written_and_a_cut_stream_ends_cleanly() {
        let mut bytes = Vec::new();
        write_frame(&mut bytes, STDOUT, b"hello").unwrap();
        write_frame(&mut bytes, EXIT, &7i32.to_be_bytes()).unwrap();
        let mut from = &bytes[..];
        assert_eq!(
            read_frame(&mut from).unwrap(),
            Some((STDOUT, b"hello".to_vec()))
        );
        assert_eq!(
            read_frame(&mut from).unwrap(),
            Some((EXIT, 7i32.to_be_bytes().to_vec()))
        );
        assert_eq!(read_frame(&mut from).unwrap(), None);
    }
}
