//! Where a phone reaches the server. Bound to every address (`--listen 0.0.0.0:PORT`), the
//! server is reached through this machine's own addresses, which the pairing link must name
//! (`0.0.0.0` is no address a phone can open) and the server must answer to; the names
//! `--host` gives (a tunnel's, a reverse proxy's, the machine's name on the network) come
//! first. On loopback only this machine reaches it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

/// This machine's addresses another machine may reach it by: each interface's, but loopback
/// and link-local ones, the one its default route leaves from first.
pub fn machine_addresses() -> Vec<IpAddr> {
    let mut all: Vec<IpAddr> = Vec::new();
    all.extend(default_route_source());
    all.extend(interface_addresses());
    all.retain(|ip| reachable(*ip));
    let mut seen = std::collections::HashSet::new();
    all.retain(|ip| seen.insert(*ip));
    all
}

/// `host:port` for each name a phone may open the server by, in the order to offer them:
/// the `--host` names (`extra`), then, for a server bound to every address, this machine's
/// addresses (`machine`), else the bound address (`localhost` on loopback).
pub fn reachable_hosts(bound: SocketAddr, extra: &[String], machine: &[IpAddr]) -> Vec<String> {
    let port = bound.port();
    let mut hosts: Vec<String> = extra
        .iter()
        .map(|name| match name.contains(':') && !name.starts_with('[') {
            true => name.to_ascii_lowercase(),
            false => format!("{}:{port}", name.to_ascii_lowercase()),
        })
        .collect();
    if bound.ip().is_unspecified() {
        hosts.extend(machine.iter().map(|ip| host(*ip, port)));
    } else if bound.ip().is_loopback() {
        hosts.push(format!("localhost:{port}"));
    } else {
        hosts.push(host(bound.ip(), port));
    }
    if hosts.is_empty() {
        // Bound to every address of a machine with none but loopback.
        hosts.push(format!("localhost:{port}"));
    }
    let mut seen = std::collections::HashSet::new();
    hosts.retain(|h| seen.insert(h.clone()));
    hosts
}

/// `ip:port`, an IPv6 address in brackets.
pub fn host(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    }
}

/// Whether another machine could reach `ip`.
fn reachable(ip: IpAddr) -> bool {
    let link_local_v6 = matches!(ip, IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80);
    !ip.is_loopback() && !ip.is_unspecified() && !ip.is_multicast() && !link_local_v6
}

/// The address this machine's default route leaves from: a UDP socket "connected" to an
/// address of the documentation range picks it, and sends nothing.
fn default_route_source() -> Option<IpAddr> {
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    socket.connect((Ipv4Addr::new(192, 0, 2, 1), 9)).ok()?;
    Some(socket.local_addr().ok()?.ip())
}

/// Every interface's IPv4 and IPv6 address (`getifaddrs`).
fn interface_addresses() -> Vec<IpAddr> {
    let mut out = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list that stays valid until freeifaddrs;
    // each entry's address is read only for the family it says it is.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return out;
        }
        let mut entry = list;
        while !entry.is_null() {
            let address = (*entry).ifa_addr;
            if !address.is_null() {
                match i32::from((*address).sa_family) {
                    libc::AF_INET => {
                        let v4 = &*(address as *const libc::sockaddr_in);
                        out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr))));
                    }
                    libc::AF_INET6 => {
                        let v6 = &*(address as *const libc::sockaddr_in6);
                        out.push(IpAddr::V6(Ipv6Addr::from(v6.sin6_addr.s6_addr)));
                    }
                    _ => {}
                }
            }
            entry = (*entry).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(addr: &str) -> SocketAddr {
        addr.parse().unwrap()
    }

    #[test]
    fn a_phone_is_offered_the_given_names_then_the_machines_addresses_never_0_0_0_0() {
        let machine: Vec<IpAddr> = vec![
            "192.168.1.20".parse().unwrap(),
            "2001:db8::7".parse().unwrap(),
        ];
        assert_eq!(
            reachable_hosts(at("0.0.0.0:8787"), &["Phone.Example".into()], &machine),
            [
                "phone.example:8787",
                "192.168.1.20:8787",
                "[2001:db8::7]:8787"
            ]
        );
        assert_eq!(
            reachable_hosts(at("0.0.0.0:8787"), &["tunnel.example:443".into()], &[]),
            ["tunnel.example:443"]
        );
        assert_eq!(
            reachable_hosts(at("0.0.0.0:8787"), &[], &[]),
            ["localhost:8787"]
        );
        assert_eq!(
            reachable_hosts(at("127.0.0.1:8787"), &[], &machine),
            ["localhost:8787"]
        );
        assert_eq!(
            reachable_hosts(at("10.0.0.5:8787"), &[], &machine),
            ["10.0.0.5:8787"]
        );
    }

    #[test]
    fn the_machines_addresses_are_ones_another_machine_could_reach() {
        for ip in machine_addresses() {
            assert!(reachable(ip), "{ip}");
        }
        for unreachable in ["127.0.0.1", "::1", "0.0.0.0", "fe80::1", "224.0.0.1"] {
            assert!(!reachable(unreachable.parse().unwrap()), "{unreachable}");
        }
    }
}
