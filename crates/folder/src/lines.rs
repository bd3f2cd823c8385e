//! The layout Baton writes `tasks.json` in: the board's own members and the entries of its
//! lists and maps each on a line of their own (two spaces deep, as pretty JSON lays them out),
//! and each entry whole on its line. A task is one line.
//!
//! Every change writes the whole board and every reader reads it whole, so the board's bytes are
//! the cost of every change on a board of thousands: pretty JSON spends a line and six spaces of
//! indent on each member of each task, about a quarter of the file. A task on one line is also
//! one line of `git diff` when it changes, and [`crate::rewrite`] finds it with one look at the
//! line. The schema is the same: `jq`, serde and Python's `json` read the file as they read the
//! pretty one, and a file another tool wrote pretty is read as it is.

use std::io;

use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

/// How deep the layout goes on lines: the board (1) and its lists and maps (2); what is inside
/// those is written compactly on its entry's line.
const LINED: usize = 2;

/// A serde_json formatter for the layout: pretty to [`LINED`] deep, compact below.
pub(crate) struct Lines {
    pretty: PrettyFormatter<'static>,
    /// How deep the container being written is (the board's object: 1).
    depth: usize,
}

impl Lines {
    pub(crate) fn new() -> Self {
        Lines {
            pretty: PrettyFormatter::new(),
            depth: 0,
        }
    }

    fn lined(&self) -> bool {
        self.depth <= LINED
    }
}

impl Formatter for Lines {
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth += 1;
        match self.lined() {
            true => self.pretty.begin_array(writer),
            false => CompactFormatter.begin_array(writer),
        }
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        let ended = match self.lined() {
            true => self.pretty.end_array(writer),
            false => CompactFormatter.end_array(writer),
        };
        self.depth -= 1;
        ended
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        match self.lined() {
            true => self.pretty.begin_array_value(writer, first),
            false => CompactFormatter.begin_array_value(writer, first),
        }
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        match self.lined() {
            true => self.pretty.end_array_value(writer),
            false => CompactFormatter.end_array_value(writer),
        }
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth += 1;
        match self.lined() {
            true => self.pretty.begin_object(writer),
            false => CompactFormatter.begin_object(writer),
        }
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        let ended = match self.lined() {
            true => self.pretty.end_object(writer),
            false => CompactFormatter.end_object(writer),
        };
        self.depth -= 1;
        ended
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        match self.lined() {
            true => self.pretty.begin_object_key(writer, first),
            false => CompactFormatter.begin_object_key(writer, first),
        }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        match self.lined() {
            true => self.pretty.begin_object_value(writer),
            false => CompactFormatter.begin_object_value(writer),
        }
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        match self.lined() {
            true => self.pretty.end_object_value(writer),
            false => CompactFormatter.end_object_value(writer),
        }
    }
}

/// `value` in the layout, into `bytes`.
pub(crate) fn write<T: serde::Serialize + ?Sized>(
    bytes: &mut Vec<u8>,
    value: &T,
) -> serde_json::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(bytes, Lines::new());
    value.serialize(&mut serializer)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    fn laid_out(value: &Value) -> String {
        let mut bytes = Vec::new();
        super::write(&mut bytes, value).unwrap();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn the_board_s_lists_and_maps_have_an_entry_a_line_each_whole() {
        let board = json!({
            "version": 1,
            "tasks": [
                {"id": "a", "context": {"files": ["x", "y"], "hints": "h"}, "dependencies": []},
                {"id": "b", "result": null}
            ],
            "empty": [],
            "agents": {"w1": {"last_heartbeat": "t"}}
        });
        let text = laid_out(&board);
        assert_eq!(
            text,
            "{\n  \"version\": 1,\n  \"tasks\": [\n    \
             {\"id\":\"a\",\"context\":{\"files\":[\"x\",\"y\"],\"hints\":\"h\"},\"dependencies\":[]},\n    \
             {\"id\":\"b\",\"result\":null}\n  ],\n  \"empty\": [],\n  \"agents\": {\n    \
             \"w1\": {\"last_heartbeat\":\"t\"}\n  }\n}"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), board);
    }

    #[test]
    fn a_line_holds_its_entry_whatever_the_entry_s_text() {
        // Newlines and the layout's own punctuation in strings are escaped or inside quotes.
        let board = json!({"tasks": [{"id": "a", "description": "one\n    },\n    {\"x\": 1}"}]});
        let text = laid_out(&board);
        assert_eq!(text.lines().count(), 5, "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), board);
    }
}
