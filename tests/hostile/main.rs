//! The hostile suite: each attack an agent was found to make on Baton, replayed as that agent
//! makes it (a sandboxed `exec` agent under `team up`, with a shell, any variable, a second
//! connection), on both stores, each module one root cause. `docs/SANDBOX.md` lists what an
//! agent can and cannot do and names the test here that proves each line.

use baton_test_support as support;

mod bounds;
mod landing;
mod paths;
mod reading;
mod secrets;
mod sockets;
mod stalls;
mod text;
