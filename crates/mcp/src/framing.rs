//! Line framing in front of the MCP transport. rmcp drops a line that is not JSON without an
//! answer; JSON-RPC asks for a parse error (-32700), and a client waiting on it should get one.
//! This layer reads stdin line by line, answers unparseable or oversized lines itself, and
//! passes the rest through; everything written to stdout goes through one writer task, so the
//! server's messages and these errors never interleave inside a line.

use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;

/// The longest message accepted, in bytes.
pub const MAX_LINE: usize = 8 * 1024 * 1024;
const PIPE: usize = 1024 * 1024;

fn parse_error(message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": message}})
        .to_string()
}

/// Wraps `input` and `output` (stdin and stdout): returns the reader and writer to give the MCP
/// service.
pub fn guard<R, W>(input: R, output: W) -> (DuplexStream, DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (server_input, mut to_server) = tokio::io::duplex(PIPE);
    let (from_server, server_output) = tokio::io::duplex(PIPE);
    let (errors_tx, mut errors) = mpsc::unbounded_channel::<String>();

    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = (&mut input)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .await;
            match read {
                Ok(0) | Err(_) => break, // end of input: the server sees it close
                Ok(_) => {}
            }
            if line.len() > MAX_LINE && !line.ends_with(b"\n") {
                // Skip the rest of the oversized line, then answer it.
                let mut rest = Vec::new();
                let _ = input.read_until(b'\n', &mut rest).await;
                let _ = errors_tx.send(parse_error(&format!("message over {MAX_LINE} bytes")));
                continue;
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(text) {
                let _ = errors_tx.send(parse_error(&format!("parse error: {e}")));
                continue;
            }
            if to_server.write_all(text).await.is_err() || to_server.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
        let _ = to_server.shutdown().await;
    });

    tokio::spawn(async move {
        let mut output = output;
        let mut from_server = BufReader::new(from_server).lines();
        let mut server_open = true;
        loop {
            let line = tokio::select! {
                line = from_server.next_line(), if server_open => match line {
                    Ok(Some(line)) => line,
                    _ => { server_open = false; continue; }
                },
                error = errors.recv() => match error {
                    Some(error) => error,
                    None if server_open => { continue; }
                    None => break,
                },
            };
            if output.write_all(line.as_bytes()).await.is_err()
                || output.write_all(b"\n").await.is_err()
                || output.flush().await.is_err()
            {
                break;
            }
            if !server_open && errors.is_empty() && errors.is_closed() {
                break;
            }
        }
    });

    (server_input, server_output)
}
