//! A sandboxed agent's network: none of its own, and an HTTP proxy outside that reaches only
//! its profile's allow-list ([`crate::net::allow_list`]).
//!
//! The sandbox has a network namespace of its own with nothing in it but loopback, so nothing
//! inside reaches the machine or the internet directly. Two halves carry what may go out:
//!
//! - **Outside** ([`NetProxy`]), in the supervisor, beside the attempt's door: a Unix socket
//!   (`proxy` in the door's folder, so inside at `/tmp/baton/proxy`) that speaks HTTP proxy:
//!   `CONNECT host:port` (HTTPS, and any TCP an allowed port carries) and absolute-form
//!   `GET http://host/…` requests. A host the allow-list does not name is answered 403 and
//!   said in the attempt's transcript; an allowed name that resolves to the machine's own
//!   loopback or link-local addresses (cloud metadata) is refused too, unless the entry named
//!   that address itself.
//! - **Inside** ([`start_relay`]): the sandbox's first command ([`crate::inside`])
//!   listens on `127.0.0.1:3128` inside (what `HTTP_PROXY`/`HTTPS_PROXY` name) and on each
//!   loopback port the allow-list names (so `ANTHROPIC_BASE_URL=http://127.0.0.1:4000` works
//!   unchanged), forks a relay that carries each connection to the proxy's socket, and
//!   becomes the agent's command. The relay ends with the sandbox.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::listening::Listening;
use crate::net::allow_list::{AllowList, is_loopback};

/// The proxy's socket in the door's folder.
pub const SOCKET: &str = "proxy";
/// The port the proxy is reached at inside the sandbox.
pub const INSIDE_PORT: u16 = 3128;
/// The longest request head the proxy reads.
const MAX_HEAD: usize = 64 * 1024;
/// Connections one attempt may have open through the proxy at once.
const MAX_OPEN: usize = 256;
/// How long a connection may take to send its request head.
const HEAD_PATIENCE: Duration = Duration::from_secs(30);
/// How long reaching an allowed host may take.
const CONNECT_PATIENCE: Duration = Duration::from_secs(15);

/// Asks whether a connection to `HOST:PORT` outside the allow-list may go through: `Ok` when
/// it may, else why not (the door puts it to the project's approval policy and the lead).
pub type Asker = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// The proxy of one attempt, open until dropped.
pub struct NetProxy {
    _listening: Listening,
}

impl NetProxy {
    /// Listens at `address` (a socket path this process can bind), letting through what
    /// `allow` allows and saying each refusal to `refused`.
    /// With `ask`, what the list does not name is asked about instead of refused at once.
    pub fn open(
        address: &Path,
        allow: AllowList,
        refused: impl Fn(String) + Send + Sync + 'static,
        ask: Option<Asker>,
    ) -> io::Result<NetProxy> {
        let rules = Rules { allow, ask };
        let listening = Listening::serve(address, "net-proxy", MAX_OPEN, move |stream| {
            serve(stream, &rules, &refused)
        })?;
        Ok(NetProxy {
            _listening: listening,
        })
    }
}

/// What goes through: the list, and whom to ask about the rest.
struct Rules {
    allow: AllowList,
    ask: Option<Asker>,
}

/// A request's head as the proxy needs it.
#[derive(Debug, PartialEq, Eq)]
struct Head {
    connect: bool,
    host: String,
    port: u16,
    /// What to send the host first: nothing for CONNECT, the request in origin form otherwise.
    forward: Vec<u8>,
}

/// Serves one connection to its end; a refusal is said on `refused` before the agent is
/// answered, so it is in the transcript before anything the agent does after.
fn serve(client: UnixStream, rules: &Rules, refused: &dyn Fn(String)) {
    let mut client = client;
    if let Err((status, why)) = through(&mut client, rules) {
        if status.starts_with("403") {
            refused(why.clone());
        }
        answer(&mut client, status, &why);
    }
}

/// Carries one connection through when it may go; else the status and why not.
fn through(client: &mut UnixStream, rules: &Rules) -> Result<(), (&'static str, String)> {
    const BAD: &str = "400 Bad Request";
    const REFUSED: &str = "403 Forbidden";
    let _ = client.set_read_timeout(Some(HEAD_PATIENCE));
    let Some((head, rest)) = read_head(client).map_err(|why| (BAD, why))? else {
        return Ok(());
    };
    let head = parse_head(&head).map_err(|why| (BAD, why))?;
    let target = format!("{}:{}", head.host, head.port);
    if !rules.allow.allows(&head.host, head.port) {
        let why = match &rules.ask {
            None => Some(
                "not in the profile's allow-list (add it to sandbox.allow in \
                 .coordination/team/profiles.toml)"
                    .to_string(),
            ),
            Some(ask) => ask(&target).err(),
        };
        if let Some(why) = why {
            return Err((
                REFUSED,
                format!("the sandbox refused a connection to {target}: {why}"),
            ));
        }
    }
    let mut upstream = match reach(&head.host, head.port) {
        Ok(upstream) => upstream,
        Err(NetworkAccess::Inward(ip)) => {
            return Err((
                REFUSED,
                format!(
                    "the sandbox refused a connection to {target}: it resolves to {ip}, the \
                     machine's own (allow that address itself to reach it)"
                ),
            ));
        }
        Err(NetworkAccess::Failed(e)) => {
            return Err(("502 Bad Gateway", format!("cannot reach {target}: {e}")));
        }
    };
    let _ = client.set_read_timeout(None);
    let sent = match head.connect {
        true => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n"),
        false => upstream.write_all(&head.forward),
    };
    if sent.is_err() || upstream.write_all(&rest).is_err() {
        return Ok(());
    }
    if let Ok(client) = client.try_clone() {
        relay(client, upstream);
    }
    Ok(())
}

/// A request's head, and the bytes read after it.
type HeadAndRest = (Vec<u8>, Vec<u8>);

/// Reads up to the end of a request head: the head, and what came after it. `None` when the
/// connection closed before saying anything.
fn read_head(client: &mut UnixStream) -> Result<Option<HeadAndRest>, String> {
    let mut read = Vec::with_capacity(1024);
    let mut buf = [0u8; 4096];
    loop {
        let n = client.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return match read.is_empty() {
                true => Ok(None),
                false => Err("the request ended inside its head".into()),
            };
        }
        let from = read.len().saturating_sub(3);
        read.extend_from_slice(&buf[..n]);
        if let Some(at) = read[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            let end = from + at + 4;
            let rest = read.split_off(end);
            return Ok(Some((read, rest)));
        }
        if read.len() > MAX_HEAD {
            return Err(format!("the request head is longer than {MAX_HEAD} bytes"));
        }
    }
}

fn parse_head(head: &[u8]) -> Result<Head, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8")?;
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut words = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(format!("not an HTTP request line: {first:?}"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("not HTTP/1: {version:?}"));
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None)?;
        return Ok(Head {
            connect: true,
            host,
            port,
            forward: Vec::new(),
        });
    }
    let rest = match target.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
        _ => {
            return Err(format!(
                "a proxy request names an http:// address or uses CONNECT, not {target:?}"
            ));
        }
    };
    let (authority_part, path) = match rest.find(['/', '?']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let (host, port) = authority(authority_part, Some(80))?;
    let mut forward = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if name.eq_ignore_ascii_case("connection")
            || name.to_ascii_lowercase().starts_with("proxy-")
            || name.eq_ignore_ascii_case("keep-alive")
        {
            continue;
        }
        forward.push_str(line);
        forward.push_str("\r\n");
    }
    // One request per connection: the next may be for another host.
    forward.push_str("Connection: close\r\n\r\n");
    Ok(Head {
        connect: false,
        host,
        port,
        forward: forward.into_bytes(),
    })
}

/// `host:port` (or `[v6]:port`), the port `default` when not given.
fn authority(text: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let text = text.rsplit('@').next().unwrap_or_default();
    let bad = || format!("not a host and port: {text:?}");
    let (host, port) = match text.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']').ok_or_else(bad)?;
            (host, after.strip_prefix(':'))
        }
        None => match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        },
    };
    let port = match port {
        Some(port) => port.parse().map_err(|_| bad())?,
        None => default.ok_or_else(bad)?,
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '/') {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

enum NetworkAccess {
    /// An allowed name resolved to the machine's own or link-local address.
    Inward(IpAddr),
    Failed(io::Error),
}

/// Connects to `host:port`; a name must not lead to the machine itself or its link-local
/// neighbours (only an entry naming that address allows those).
fn reach(host: &str, port: u16) -> Result<TcpStream, NetworkAccess> {
    let literal = is_loopback(host) || host.trim_matches(['[', ']']).parse::<IpAddr>().is_ok();
    let addresses: Vec<SocketAddr> = (host.trim_matches(['[', ']']), port)
        .to_socket_addrs()
        .map_err(NetworkAccess::Failed)?
        .collect();
    if !literal && let Some(inward) = addresses.iter().map(|a| a.ip()).find(inward) {
        return Err(NetworkAccess::Inward(inward));
    }
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for address in addresses {
        match TcpStream::connect_timeout(&address, CONNECT_PATIENCE) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(NetworkAccess::Failed(last))
}

fn inward(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_link_local() || v4.is_unspecified(),
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| inward(&IpAddr::V4(v4)))
        }
    }
}

fn answer(client: &mut UnixStream, status: &str, why: &str) {
    let body = format!("{why}\n");
    let _ = write!(
        client,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Copies both ways until both ends are done.
fn relay<A, B>(a: A, b: B)
where
    A: Duplex,
    B: Duplex,
{
    let (Ok(a2), Ok(b2)) = (a.twin(), b.twin()) else {
        return;
    };
    let back = std::thread::spawn(move || pipe(b2, a2));
    pipe(a, b);
    let _ = back.join();
}

/// A connection that can be read and written from two threads.
trait Duplex: Read + Write + Send + 'static + Sized {
    fn twin(&self) -> io::Result<Self>;
    fn end_writing(&self);
}

impl Duplex for UnixStream {
    fn twin(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn end_writing(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

impl Duplex for TcpStream {
    fn twin(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn end_writing(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

/// Copies what `from` says to `to` until it ends, then ends `to`'s writing. In pieces of up to
/// 256 KiB (io::copy's 8 KiB took a fifth of loopback's rate).
fn pipe<A: Duplex, B: Duplex>(mut from: A, mut to: B) {
    let mut piece = vec![0u8; 256 * 1024];
    loop {
        match from.read(&mut piece) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&piece[..n]).is_err() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    to.end_writing();
}

/// The inside half: listens on the proxy's port and each of `forward` on loopback inside (when
/// `proxy` names its socket), and on the door's port (when `door` names its socket and port),
/// and forks the relay that carries their connections to those sockets. Called by the
/// sandbox's first command ([`crate::inside`]) before it becomes the agent, while it has one
/// thread, so the forked relay may use everything; nothing is forked when there is nothing to
/// carry.
pub(crate) fn start_relay(
    proxy: Option<(&Path, &[u16])>,
    door: Option<(&Path, u16)>,
) -> Result<(), String> {
    let mut listeners = Vec::new();
    if let Some((socket, forward)) = proxy {
        for (n, port) in std::iter::once(&INSIDE_PORT).chain(forward).enumerate() {
            let listener = TcpListener::bind(("127.0.0.1", *port))
                .map_err(|e| format!("cannot listen on 127.0.0.1:{port} inside: {e}"))?;
            // The first is the proxy's; the others reach the same loopback port outside.
            let to = match n {
                0 => Bridge::Proxy,
                _ => Bridge::Forward(*port),
            };
            listeners.push((to, socket.to_path_buf(), listener));
        }
    }
    if let Some((socket, port)) = door {
        let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
            format!(
                "cannot listen for the door on 127.0.0.1:{port} inside (does the allow-list \
                 forward it?): {e}"
            )
        })?;
        listeners.push((Bridge::Door, socket.to_path_buf(), listener));
    }
    if listeners.is_empty() {
        return Ok(());
    }
    // The relay is this process forked (no second program to load: the agent starts sooner).
    // SAFETY: fork in a process with one thread; the child only serves and exits.
    match unsafe { libc::fork() } {
        -1 => Err(format!(
            "cannot start its relay: {}",
            io::Error::last_os_error()
        )),
        0 => serve_inside(listeners),
        _ => Ok(()),
    }
}

/// Where a relayed connection goes.
#[derive(Clone, Copy)]
enum Bridge {
    /// The proxy, as it was asked.
    Proxy,
    /// The machine's loopback port, through the proxy (a CONNECT).
    Forward(u16),
    /// The door, byte for byte.
    Door,
}

/// The relay: accepts on each listener and carries each connection to the proxy's socket (a
/// forwarded port's as a CONNECT to the same port of the machine). It stays through the
/// agent's stop (TERM, INT and HUP ignored) and ends with the sandbox; it holds none of the
/// agent's output.
fn serve_inside(listeners: Vec<(Bridge, PathBuf, TcpListener)>) -> ! {
    // SAFETY: signal dispositions, descriptors and the dumpable flag of this process only.
    unsafe {
        // The agent (whose child this is) may not read or write its memory through /proc, or
        // trace it: it makes the Unix connections the agent may not.
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::signal(signal, libc::SIG_IGN);
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..=2 {
                libc::dup2(null, fd);
            }
        }
    }
    let threads: Vec<_> = listeners
        .into_iter()
        .map(|(bridge, socket, listener)| {
            std::thread::spawn(move || {
                for client in listener.incoming().flatten() {
                    let socket = socket.clone();
                    std::thread::spawn(move || carry(client, &socket, bridge));
                }
            })
        })
        .collect();
    for thread in threads {
        let _ = thread.join();
    }
    // SAFETY: ends this forked process without running the parent's exit handlers twice.
    unsafe { libc::_exit(0) }
}

fn carry(client: TcpStream, socket: &Path, bridge: Bridge) {
    let Ok(mut proxy) = UnixStream::connect(socket) else {
        return;
    };
    if let Bridge::Forward(port) = bridge {
        let asked = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        if proxy.write_all(asked.as_bytes()).is_err() {
            return;
        }
        // The proxy's answer to a CONNECT is a head alone; anything else ends the connection.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match proxy.read(&mut byte) {
                Ok(1) if head.len() < MAX_HEAD => head.push(byte[0]),
                _ => return,
            }
        }
        if !head.starts_with(b"HTTP/1.1 200") {
            return;
        }
    }
    relay(client, proxy);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    #[test]
    fn request_heads_are_read_as_a_proxy_must() {
        let connect =
            parse_head(b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert!(connect.connect);
        assert_eq!(
            (connect.host.as_str(), connect.port),
            ("api.example.com", 443)
        );
        let get = parse_head(
            b"GET http://127.0.0.1:4000/v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1:4000\r\n\
              Proxy-Connection: keep-alive\r\nProxy-Authorization: x\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert!(!get.connect);
        assert_eq!((get.host.as_str(), get.port), ("127.0.0.1", 4000));
        let forward = String::from_utf8(get.forward).unwrap();
        assert!(
            forward.starts_with("GET /v1/messages?beta=true HTTP/1.1\r\n"),
            "{forward}"
        );
        assert!(!forward.contains("Proxy-"), "{forward}");
        assert!(
            forward.ends_with("Accept: */*\r\nConnection: close\r\n\r\n"),
            "{forward}"
        );
        let v6 = parse_head(b"CONNECT [::1]:8080 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8080));
        let plain = parse_head(b"GET http://example.org HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(plain.port, 80);
        assert!(
            String::from_utf8(plain.forward)
                .unwrap()
                .starts_with("GET / HTTP/1.0")
        );
        for bad in [
            &b"GET /relative HTTP/1.1\r\n\r\n"[..],
            b"CONNECT nowhere HTTP/1.1\r\n\r\n",
            b"CONNECT a:b HTTP/1.1\r\n\r\n",
            b"GET https://x.org/ HTTP/1.1\r\n\r\n",
            b"BREW coffee\r\n\r\n",
            b"\xff\xfe\r\n\r\n",
            b"GET http://x.org/ SPDY/3\r\n\r\n",
        ] {
            assert!(parse_head(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn names_that_lead_inward_are_told_apart() {
        assert!(inward(&"127.0.0.1".parse().unwrap()));
        assert!(inward(&"169.254.169.254".parse().unwrap()));
        assert!(inward(&"::ffff:127.0.0.1".parse().unwrap()));
        assert!(inward(&"fe80::1".parse().unwrap()));
        assert!(!inward(&"93.184.216.34".parse().unwrap()));
    }

    /// A server on loopback that answers each connection with `reply` after reading a line.
    fn upstream(reply: &'static str) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = io::BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let mut stream = stream;
                let _ = write!(stream, "{reply} after {}", line.trim());
            }
        });
        port
    }

    fn ask(socket: &Path, request: &str) -> String {
        let mut stream = UnixStream::connect(socket).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut said = String::new();
        let _ = stream.read_to_string(&mut said);
        said
    }

    #[test]
    fn the_proxy_lets_through_what_is_allowed_and_says_what_it_refused() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join(SOCKET);
        let allowed = upstream("HELLO");
        let other = upstream("SECRET");
        let (refused, refusals) = std::sync::mpsc::channel();
        let proxy = NetProxy::open(
            &socket,
            AllowList::parse(&[format!("127.0.0.1:{allowed}")]).unwrap(),
            move |why| {
                let _ = refused.send(why);
            },
            None,
        )
        .unwrap();

        let through = ask(
            &socket,
            &format!("CONNECT 127.0.0.1:{allowed} HTTP/1.1\r\n\r\nping\n"),
        );
        assert_eq!(
            through,
            "HTTP/1.1 200 Connection established\r\n\r\nHELLO after ping"
        );
        let plain = ask(
            &socket,
            &format!("GET http://127.0.0.1:{allowed}/x HTTP/1.1\r\nHost: h\r\n\r\n"),
        );
        assert_eq!(plain, "HELLO after GET /x HTTP/1.1");

        let refused_answer = ask(
            &socket,
            &format!("CONNECT 127.0.0.1:{other} HTTP/1.1\r\n\r\nping\n"),
        );
        assert!(
            refused_answer.starts_with("HTTP/1.1 403"),
            "{refused_answer}"
        );
        assert!(!refused_answer.contains("SECRET"), "{refused_answer}");
        let said = refusals.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(
            said.contains(&format!("refused a connection to 127.0.0.1:{other}")),
            "{said}"
        );
        let nonsense = ask(&socket, "HELLO\r\n\r\n");
        assert!(nonsense.starts_with("HTTP/1.1 400"), "{nonsense}");

        // Closed with the attempt: nothing answers any more.
        drop(proxy);
        assert!(UnixStream::connect(&socket).is_err() || ask(&socket, "x").is_empty());
    }
}
