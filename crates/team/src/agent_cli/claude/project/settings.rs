//! What `baton setup claude` adds to Claude Code's project files, and takes out again, as pure
//! functions over their JSON (so every merge is tested without a file system): the `baton`
//! server in `.mcp.json`, and in `.claude/settings.json` the hooks (and, asked for, the
//! approval of the server and its tools). Everything else in those files is left as it is, in
//! its order.

use serde_json::{Map, Value, json};

/// The MCP server's name in `.mcp.json` (its tools are `mcp__baton__*`).
pub const SERVER: &str = "baton";

/// The hooks, by Claude Code event: (event, matcher, command).
pub const HOOKS: [(&str, Option<&str>, &str); 4] = [
    ("SessionStart", None, "baton claude-hook session-start"),
    ("PreToolUse", Some("*"), "baton claude-hook tool-use"),
    ("PostToolUse", Some("*"), "baton claude-hook tool-use"),
    ("Stop", None, "baton claude-hook stop"),
];

/// How long Claude Code lets a hook run, in seconds (they answer in milliseconds).
const HOOK_TIMEOUT: u64 = 10;

/// The permission that lets the agent use every Baton tool without asking.
const TOOLS_PERMISSION: &str = "mcp__baton";

/// Adds the `baton` server to an `.mcp.json` document; says what it did. A `baton` entry that
/// is there already is kept as it is (the user's own, perhaps with other arguments).
pub fn add_server(doc: &mut Value) -> Vec<String> {
    let servers = object_at(doc, "mcpServers");
    match servers.get(SERVER) {
        Some(entry) if entry == &server_entry() => Vec::new(),
        Some(_) => vec![format!(
            "kept your own \"{SERVER}\" server entry in .mcp.json as it is"
        )],
        None => {
            servers.insert(SERVER.into(), server_entry());
            vec![format!("added the \"{SERVER}\" MCP server (`baton mcp`)")]
        }
    }
}

fn server_entry() -> Value {
    json!({"command": "baton", "args": ["mcp"]})
}

/// Adds Baton's hooks to a `.claude/settings.json` document (each once), and with `approve`
/// the server's approval and its tools' permission; says what it did.
pub fn add_settings(doc: &mut Value, approve: bool) -> Vec<String> {
    let mut said = Vec::new();
    let hooks = object_at(doc, "hooks");
    for (event, matcher, command) in HOOKS {
        let groups = array_at(hooks, event);
        if groups.iter().any(|group| has_command(group, command)) {
            continue;
        }
        let mut group = Map::new();
        if let Some(matcher) = matcher {
            group.insert("matcher".into(), matcher.into());
        }
        group.insert(
            "hooks".into(),
            json!([{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]),
        );
        groups.push(Value::Object(group));
        said.push(format!("added the {event} hook (`{command}`)"));
    }
    if approve {
        if add_to_list(object_root(doc), "enabledMcpjsonServers", SERVER) {
            said.push(format!(
                "approved the \"{SERVER}\" server from .mcp.json (enabledMcpjsonServers)"
            ));
        }
        if add_to_list(object_at(doc, "permissions"), "allow", TOOLS_PERMISSION) {
            said.push(format!(
                "allowed Baton's tools without asking (permissions.allow {TOOLS_PERMISSION})"
            ));
        }
    }
    said
}

/// Takes Baton's server out of an `.mcp.json` document (only if it is the entry setup
/// writes); says what it did.
pub fn remove_server(doc: &mut Value) -> Vec<String> {
    let Some(servers) = doc.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return Vec::new();
    };
    if servers.get(SERVER) != Some(&server_entry()) {
        return Vec::new();
    }
    servers.remove(SERVER);
    if servers.is_empty() {
        doc.as_object_mut().map(|d| d.remove("mcpServers"));
    }
    vec![format!("removed the \"{SERVER}\" MCP server")]
}

/// Takes Baton's hooks, approval and permission out of a settings document, and the
/// containers they leave empty; says what it did.
pub fn remove_settings(doc: &mut Value) -> Vec<String> {
    let mut said = Vec::new();
    let Some(root) = doc.as_object_mut() else {
        return said;
    };
    if let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) {
        for (event, _, command) in HOOKS {
            let Some(groups) = hooks.get_mut(event).and_then(Value::as_array_mut) else {
                continue;
            };
            let before = groups.len();
            for group in groups.iter_mut() {
                if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                    list.retain(|hook| hook.get("command") != Some(&json!(command)));
                }
            }
            groups.retain(|group| {
                group
                    .get("hooks")
                    .and_then(Value::as_array)
                    .is_none_or(|list| !list.is_empty())
            });
            if groups.len() != before {
                said.push(format!("removed the {event} hook"));
            }
            if groups.is_empty() {
                hooks.remove(event);
            }
        }
        if hooks.is_empty() {
            root.remove("hooks");
        }
    }
    if remove_from_list(root, "enabledMcpjsonServers", SERVER) {
        said.push(format!("removed the \"{SERVER}\" server's approval"));
    }
    if let Some(permissions) = root.get_mut("permissions").and_then(Value::as_object_mut) {
        if remove_from_list(permissions, "allow", TOOLS_PERMISSION) {
            said.push("removed the permission for Baton's tools".into());
        }
        if permissions.is_empty() {
            root.remove("permissions");
        }
    }
    said
}

fn has_command(group: &Value, command: &str) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|list| {
            list.iter()
                .any(|h| h.get("command") == Some(&json!(command)))
        })
}

/// The document as an object (a document that is not one is replaced by an empty object; the
/// caller refuses those before merging).
fn object_root(doc: &mut Value) -> &mut Map<String, Value> {
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    doc.as_object_mut().expect("an object")
}

/// The object under `key`, made if missing (or if it is not an object).
fn object_at<'a>(doc: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    let entry = object_root(doc)
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut().expect("an object")
}

fn array_at<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Vec<Value> {
    let entry = map.entry(key).or_insert_with(|| Value::Array(Vec::new()));
    if !entry.is_array() {
        *entry = Value::Array(Vec::new());
    }
    entry.as_array_mut().expect("an array")
}

/// Adds `item` to the list under `key` unless it is there; whether it was added.
fn add_to_list(map: &mut Map<String, Value>, key: &str, item: &str) -> bool {
    let list = array_at(map, key);
    if list.iter().any(|v| v == item) {
        return false;
    }
    list.push(item.into());
    true
}

/// Removes `item` from the list under `key` (and the list if that empties it); whether it was
/// there.
fn remove_from_list(map: &mut Map<String, Value>, key: &str, item: &str) -> bool {
    let Some(list) = map.get_mut(key).and_then(Value::as_array_mut) else {
        return false;
    };
    let before = list.len();
    list.retain(|v| v != item);
    let removed = list.len() != before;
    if list.is_empty() {
        map.remove(key);
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_are_added_once_beside_the_users_own_and_taken_out_leaving_them() {
        let mut doc = json!({
            "model": "opus",
            "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [
                {"type": "command", "command": "cargo fmt"}]}]},
            "permissions": {"allow": ["Bash(cargo test:*)"]}
        });
        let original = doc.clone();
        let said = add_settings(&mut doc, true);
        assert_eq!(said.len(), 6, "{said:?}");
        assert_eq!(doc["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            doc["hooks"]["PostToolUse"][0],
            original["hooks"]["PostToolUse"][0]
        );
        assert_eq!(
            doc["hooks"]["Stop"][0]["hooks"][0]["command"],
            "baton claude-hook stop"
        );
        assert!(doc["hooks"]["Stop"][0].get("matcher").is_none());
        assert_eq!(
            doc["permissions"]["allow"],
            json!(["Bash(cargo test:*)", "mcp__baton"])
        );
        assert_eq!(doc["enabledMcpjsonServers"], json!(["baton"]));
        // A second time changes nothing.
        let once = doc.clone();
        assert!(add_settings(&mut doc, true).is_empty());
        assert_eq!(doc, once);

        let said = remove_settings(&mut doc);
        assert_eq!(said.len(), 6, "{said:?}");
        assert_eq!(doc, original);
    }

    #[test]
    fn the_server_is_added_and_removed_but_a_users_own_entry_is_kept() {
        let mut doc = json!({"mcpServers": {"other": {"command": "x"}}});
        assert_eq!(add_server(&mut doc).len(), 1);
        assert_eq!(
            doc["mcpServers"]["baton"],
            json!({"command": "baton", "args": ["mcp"]})
        );
        assert!(add_server(&mut doc).is_empty());
        assert_eq!(remove_server(&mut doc).len(), 1);
        assert_eq!(doc, json!({"mcpServers": {"other": {"command": "x"}}}));

        let mut theirs = json!({"mcpServers": {"baton": {"command": "/opt/baton", "args": ["mcp", "--agent", "a"]}}});
        let before = theirs.clone();
        let said = add_server(&mut theirs);
        assert!(said[0].contains("kept your own"), "{said:?}");
        assert_eq!(theirs, before);
        assert!(remove_server(&mut theirs).is_empty());
        assert_eq!(theirs, before);
    }

    #[test]
    fn an_empty_document_gets_only_what_baton_needs() {
        let mut doc = Value::Null;
        add_settings(&mut doc, false);
        assert_eq!(
            doc.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["hooks"],
            "no approval unless asked: {doc}"
        );
        remove_settings(&mut doc);
        assert_eq!(doc, json!({}));
    }
}
