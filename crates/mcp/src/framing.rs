//! The stdio transport. rmcp's own drops a line that is not JSON without an answer; JSON-RPC
//! asks for a parse error (-32700), and a client waiting on it should get one. This transport
//! reads stdin line by line and answers unparseable (-32700), invalid (-32600) and oversized
//! lines itself; the server's messages and these answers share one locked writer, so they never
//! interleave inside a line.
//!
//! When stdin and stdout are pipes (as MCP clients start servers) they are driven by the event
//! loop directly rather than through tokio's blocking-thread stdio, which saves a thread hop on
//! every message in each direction.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest message accepted, in bytes.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

type Reader = BufReader<Pin<Box<dyn AsyncRead + Send>>>;
type Writer = Arc<Mutex<Pin<Box<dyn AsyncWrite + Send>>>>;

pub struct StdioTransport {
    reader: Reader,
    writer: Writer,
    line: Vec<u8>,
}

/// A pipe on `fd` as an async stream, if it is a pipe (FIFO); `None` otherwise.
fn pipe_fd(fd: std::os::fd::BorrowedFd<'_>) -> Option<OwnedFd> {
    use std::os::unix::fs::FileTypeExt;
    let owned = fd.try_clone_to_owned().ok()?;
    let file = std::fs::File::from(owned);
    file.metadata()
        .ok()?
        .file_type()
        .is_fifo()
        .then(|| file.into())
}

impl StdioTransport {
    /// The process's stdin and stdout. Must be called inside the runtime.
    pub fn stdio() -> StdioTransport {
        let reader: Pin<Box<dyn AsyncRead + Send>> = match pipe_fd(io::stdin().as_fd())
            .and_then(|fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok())
        {
            Some(pipe) => Box::pin(pipe),
            None => Box::pin(tokio::io::stdin()),
        };
        let writer: Pin<Box<dyn AsyncWrite + Send>> = match pipe_fd(io::stdout().as_fd())
            .and_then(|fd| tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok())
        {
            Some(pipe) => Box::pin(pipe),
            None => Box::pin(tokio::io::stdout()),
        };
        StdioTransport::new(reader, writer)
    }

    pub fn new(
        reader: Pin<Box<dyn AsyncRead + Send>>,
        writer: Pin<Box<dyn AsyncWrite + Send>>,
    ) -> StdioTransport {
        StdioTransport {
            reader: BufReader::new(reader),
            writer: Arc::new(Mutex::new(writer)),
            line: Vec::new(),
        }
    }
}

/// Answers a message the server never sees.
async fn answer(writer: &Writer, id: serde_json::Value, code: i64, message: String) {
    let error = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let _ = write_line(writer, error.to_string().into_bytes()).await;
}

async fn write_line(writer: &Writer, mut bytes: Vec<u8>) -> io::Result<()> {
    bytes.push(b'\n');
    let mut writer = writer.lock().await;
    writer.write_all(&bytes).await?;
    writer.flush().await
}

impl Transport<RoleServer> for StdioTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let bytes = serde_json::to_vec(&item).map_err(io::Error::other);
        async move { write_line(&writer, bytes?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.line.clear();
            let read = (&mut self.reader)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut self.line)
                .await;
            match read {
                Ok(0) | Err(_) => return None, // end of input
                Ok(_) => {}
            }
            if self.line.len() > MAX_LINE && !self.line.ends_with(b"\n") {
                let mut rest = Vec::new();
                let _ = self.reader.read_until(b'\n', &mut rest).await;
                answer(
                    &self.writer,
                    serde_json::Value::Null,
                    -32700,
                    format!("message over {MAX_LINE} bytes"),
                )
                .await;
                continue;
            }
            let text = self.line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let value: serde_json::Value = match serde_json::from_slice(text) {
                Ok(value) => value,
                Err(e) => {
                    answer(
                        &self.writer,
                        serde_json::Value::Null,
                        -32700,
                        format!("parse error: {e}"),
                    )
                    .await;
                    continue;
                }
            };
            let id = value.get("id").cloned().unwrap_or(serde_json::Value::Null);
            match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
                Ok(message) => return Some(message),
                Err(e) => {
                    answer(&self.writer, id, -32600, format!("invalid request: {e}")).await;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut writer = self.writer.lock().await;
        writer.flush().await
    }
}
