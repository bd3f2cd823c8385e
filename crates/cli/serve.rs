//! `baton serve`: the UI over HTTP for paired browsers, and its devices (`baton-serve`).

use std::net::SocketAddr;
use std::path::PathBuf;

use baton_api::{Error, OpenProject};
use baton_core::ErrorKind;
use baton_serve::{Devices, Scope, ServeOptions};
use clap::{Args, Subcommand};

use crate::output::{emit, emit_line};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
    /// The address to listen on. Anything but loopback lets other machines reach the page
    /// (each still has to be paired); put it behind TLS (a tunnel or a reverse proxy) then.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,
    /// Another name the server is reached by (a tunnel's or a reverse proxy's host name):
    /// requests for names it does not know are refused. Repeatable.
    #[arg(long = "host", value_name = "NAME")]
    pub hosts: Vec<String>,
    /// A folder holding the UI's build, served instead of the one built into baton (a build
    /// being worked on: ui/dist after `npm run build`).
    #[arg(long, value_name = "DIR")]
    pub ui_dir: Option<PathBuf>,
    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM); needs --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Print a pairing link for one browser as this scope when the server starts (`none`:
    /// print none; `baton serve pair` makes one later).
    #[arg(long = "pair", value_name = "SCOPE", default_value = "lead", value_parser = ["lead", "responder", "none"])]
    pub pair: String,
}

#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// A one-time link (and QR code) that pairs one browser with the running server, valid
    /// for 10 minutes.
    #[command(after_help = "Example: baton serve pair --as responder")]
    Pair {
        /// What the browser may do: lead (everything the desktop can) or responder (answer
        /// questions and approvals, review, stop an agent; not start teams, merge or edit).
        #[arg(long = "as", value_name = "SCOPE", default_value = "lead", value_parser = ["lead", "responder"])]
        scope: String,
    },
    /// The browsers paired with this machine's server for this project.
    #[command(after_help = "Example: baton serve devices --json")]
    Devices,
    /// Unpair a device: its next request is refused, and its open pages stop updating.
    #[command(after_help = "Example: baton serve revoke d-2")]
    Revoke {
        /// The device's id (`baton serve devices` lists them).
        id: String,
    },
}

pub fn serve(project: &OpenProject, args: ServeArgs, json: bool) -> Result<u8, Error> {
    let devices = Devices::of(project.local());
    match args.command {
        Some(ServeCommand::Pair { scope }) => {
            let Some(running) = baton_serve::running(project) else {
                return Err(Error::new(
                    ErrorKind::NoSession,
                    "no `baton serve` runs for this project on this machine: start it first",
                ));
            };
            pair(&devices, Scope::parse(&scope)?, &[running.url], json)
        }
        Some(ServeCommand::Devices) => {
            let list = devices.list()?;
            // Whether a device gets pushes, not where: its subscription's secret stays put.
            let listed: Vec<serde_json::Value> = list
                .iter()
                .map(|d| {
                    serde_json::json!({
                        "id": d.id, "name": d.name, "scope": d.scope, "paired_at": d.paired_at,
                        "push": d.push.is_some(),
                    })
                })
                .collect();
            emit(json, &listed, || {
                if list.is_empty() {
                    return "No paired devices: `baton serve pair` makes a link for one.".into();
                }
                list.iter()
                    .map(|d| {
                        format!(
                            "{}  {:<9}  paired {}  {}{}",
                            d.id,
                            d.scope.as_str(),
                            d.paired_at,
                            d.name,
                            if d.push.is_some() {
                                "  (pushed to)"
                            } else {
                                ""
                            }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            Ok(0)
        }
        Some(ServeCommand::Revoke { id }) => {
            let mut device = devices.revoke(&id)?;
            // Its subscription went with it; its secret is not printed.
            device.push = None;
            emit(json, &device, || {
                format!(
                    "Revoked {} ({}): its next request is refused.",
                    device.id, device.name
                )
            });
            Ok(0)
        }
        None => run(project, args, devices, json),
    }
}

/// A pairing link for one browser as `scope`, on each of `urls` (the first in a QR code when a
/// phone could open it: not on loopback, which only this machine reaches).
fn pair(devices: &Devices, scope: Scope, urls: &[String], json: bool) -> Result<u8, Error> {
    let code = devices.new_code(scope)?;
    let links: Vec<String> = urls
        .iter()
        .map(|url| baton_serve::pairing_link(url, &code))
        .collect();
    let out = serde_json::json!({"link": links[0], "links": links, "scope": scope.as_str(),
        "expires_in_seconds": baton_serve::devices::CODE_LIFETIME.as_secs()});
    emit_line(json, &out, || {
        let this_machine_only = links[0].contains("://localhost:");
        let mut text = match this_machine_only {
            true => String::new(),
            false => format!("{}\n", baton_serve::qr_code(&links[0])),
        };
        text.push_str(&format!(
            "Pair one browser as {} (for 10 minutes): open\n",
            scope.as_str()
        ));
        for link in &links {
            text.push_str(&format!("  {link}\n"));
        }
        if this_machine_only {
            text.push_str(
                "(This machine only: a phone reaches the server through --listen 0.0.0.0:PORT, \
                 behind TLS, or a tunnel named with --host.)\n",
            );
        }
        text
    });
    Ok(0)
}

fn run(project: &OpenProject, args: ServeArgs, devices: Devices, json: bool) -> Result<u8, Error> {
    let tls = match (args.tls_cert, args.tls_key) {
        (Some(certificate), Some(key)) => Some(baton_serve::Tls { certificate, key }),
        _ => None,
    };
    if !args.listen.ip().is_loopback() {
        let how = if tls.is_some() {
            "over TLS"
        } else {
            "but the traffic is plain HTTP: give --tls-cert and --tls-key, or reach it through \
             a tunnel or a reverse proxy with TLS (the guide's \"Away from the desk\")"
        };
        eprintln!(
            "baton serve: warning: listening on {}, beyond this machine. Only paired browsers \
             are answered, {how}.",
            args.listen
        );
    }
    let scope = match args.pair.as_str() {
        "none" => None,
        other => Some(Scope::parse(other)?),
    };
    let options = ServeOptions {
        listen: args.listen,
        hosts: args.hosts,
        ui_dir: args.ui_dir,
        tls,
    };
    baton_serve::serve(project.clone(), options, |urls| {
        let url = &urls[0];
        // One JSON document a line: the server's start, then its pairing link.
        emit_line(json, &serde_json::json!({"url": url, "urls": urls}), || {
            let mut text =
                format!("baton serve: serving this project's UI at {url} (Ctrl-C stops)");
            if urls.len() > 1 {
                text.push_str(&format!("\n  and at {}", urls[1..].join(", ")));
            }
            text
        });
        if let Some(scope) = scope
            && let Err(e) = pair(&devices, scope, urls, json)
        {
            eprintln!("baton serve: cannot make a pairing link: {e}");
        }
    })?;
    Ok(0)
}
