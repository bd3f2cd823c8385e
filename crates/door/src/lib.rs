//! # baton-door
//!
//! The door: a sandboxed attempt's one way to Baton.
//!
//! A sandboxed agent sees no `.coordination/`, no store URL and no password, so its `baton`
//! cannot open the project. Instead its supervisor opens a Unix socket for the attempt (in a
//! folder of its own under `.coordination/team/doors/`, shown inside the sandbox at
//! [`INSIDE`]) and the agent's `baton` (the CLI, `baton mcp`, Claude Code's hooks) is a relay
//! to it ([`DOOR_ENV`] says where): it sends its command line and working folder, then its
//! standard input, and gets back the output and exit status of the same command run by the
//! supervisor's `baton` on the supervisor's side, with the store's credentials, as that agent
//! for that task ([`CALLER_ENV`], [`TASK_ENV`]) whatever the command line or the agent's
//! variables say. That `baton` runs an agent's commands only (the CLI's `door` module, which
//! asks the catalogue who may call each operation).
//!
//! Who knocks is who the socket was made for: only that attempt's sandbox has it. The
//! commands it runs end with the attempt ([`Door::close`]). What that `baton` refuses (a
//! lead's command, another agent's task, a path outside the agent's folder) it says on a pipe
//! of its own ([`REPORT_ENV`], [`report_refusal`]), not on the output the agent reads, and the
//! door passes it on for the attempt's transcript.
//!
//! - [`protocol`]: where the door is, the knock, the frames back;
//! - [`server`]: the supervisor's side ([`Door`], [`Guest`]), with the gate that keeps a
//!   flood of refused connections from flooding the lead (`ask_gate`);
//! - [`client`]: the agent's side, a relay;
//! - [`reporting`]: what a command behind the door says it refused.

mod ask_gate;
pub mod client;
pub mod protocol;
pub mod reporting;
pub mod server;

pub use protocol::{
    CALLER_ENV, DOOR_ENV, DoorRequest, DoorStream, EXIT, INSIDE, INSIDE_PORT, READS_ONLY_ENV,
    REPORT_ENV, REPORT_FD, SOCKET, STDERR, STDOUT, TASK_ENV, WORKDIR_ENV, bridged, inside_address,
    pass_on, read_frame, write_frame,
};
pub use reporting::{keep_report_from_children, report_refusal};
pub use server::{Door, Guest, Tell};
