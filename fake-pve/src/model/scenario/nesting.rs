//! How deeply a YAML or JSON document nests, found by one linear pass
//! over its text before a parser sees it.
//!
//! YAML's parser (libyaml, under `serde_yaml`) has no depth limit of its
//! own and spends time quadratic in the depth of flow collections
//! (`{"a": {"a": ...`): 400,000 of them keep a core busy for minutes
//! before the parse fails. JSON's parser stops at 128 levels, but a
//! scenario that JSON refuses is read again as YAML. So every document a
//! scenario, a state document or a latency profile comes from is measured
//! first, and one nested deeper than [`MAX_DEPTH`] is refused unparsed.
//!
//! The scan follows libyaml's tokens far enough to tell where a
//! collection opens: flow collections (`[`, `{`) outside quoted
//! scalars, plain scalars, comments, tags and block scalars, and block
//! collections by their indentation (`- ` entries, `? ` keys and
//! `key:` mappings, as libyaml's indentation stack grows). JSON is YAML's
//! flow style, so the same pass measures it. Where the scan cannot be
//! sure, it counts a level rather than miss one.

/// The deepest nesting accepted: JSON's own recursion limit.
pub const MAX_DEPTH: usize = 128;

/// A document nested deeper than the limit, at a 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the document nests deeper than {limit} levels")]
pub struct TooDeep {
    /// The line where the nesting passed the limit.
    pub line: usize,
    /// The limit.
    pub limit: usize,
}

/// The deepest nesting of `text` (YAML or JSON), scanning no further
/// than where it passes `limit`.
///
/// # Errors
/// [`TooDeep`] at the line where a collection opens beyond `limit`.
pub fn deepest(text: &str, limit: usize) -> Result<usize, TooDeep> {
    Scan::new(text, limit).run()
}

/// Refuses `text` when it nests deeper than [`MAX_DEPTH`].
///
/// # Errors
/// [`TooDeep`] with the line.
pub fn check(text: &str) -> Result<(), TooDeep> {
    deepest(text, MAX_DEPTH).map(|_| ())
}

/// The scanner's state: a cursor over the text and libyaml's two stacks
/// (the block indentation columns and the flow level).
struct Scan<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
    /// Where the current line starts.
    line_start: usize,
    /// The columns of the open block collections (libyaml's indents).
    indents: Vec<usize>,
    flow: usize,
    /// Whether the next token may start a simple key (a mapping key
    /// whose `:` follows on the same line).
    key_allowed: bool,
    /// The line and column of the possible simple key.
    key: Option<(usize, usize)>,
    deepest: usize,
    limit: usize,
}

fn is_break(c: u8) -> bool {
    c == b'\n' || c == b'\r'
}

fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

impl<'a> Scan<'a> {
    fn new(text: &'a str, limit: usize) -> Self {
        let s = text.as_bytes();
        let pos = if s.starts_with("\u{feff}".as_bytes()) {
            3
        } else {
            0
        };
        Self {
            s,
            pos,
            line: 1,
            line_start: pos,
            indents: Vec::new(),
            flow: 0,
            key_allowed: true,
            key: None,
            deepest: 0,
            limit,
        }
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.s.get(self.pos + i).copied()
    }

    /// Whether the byte `i` ahead is a blank, a line break or the end.
    fn blankz(&self, i: usize) -> bool {
        self.at(i).is_none_or(|c| is_blank(c) || is_break(c))
    }

    fn column(&self) -> usize {
        self.pos - self.line_start
    }

    /// Steps over one byte, counting lines (`\r\n` is one break).
    fn bump(&mut self) {
        let Some(c) = self.at(0) else {
            return;
        };
        self.pos += 1;
        if c == b'\n' || (c == b'\r' && self.at(0) != Some(b'\n')) {
            self.line += 1;
            self.line_start = self.pos;
        }
    }

    fn skip_to_break(&mut self) {
        while self.at(0).is_some_and(|c| !is_break(c)) {
            self.pos += 1;
        }
    }

    fn depth(&self) -> usize {
        self.indents.len() + self.flow
    }

    /// Notes the depth after a collection opened.
    fn opened(&mut self) -> Result<(), TooDeep> {
        let d = self.depth();
        self.deepest = self.deepest.max(d);
        if d > self.limit {
            return Err(TooDeep {
                line: self.line,
                limit: self.limit,
            });
        }
        Ok(())
    }

    /// A block collection at `column`, when deeper than the innermost.
    fn roll(&mut self, column: usize) -> Result<(), TooDeep> {
        if self.flow == 0 && self.indents.last().is_none_or(|&top| top < column) {
            self.indents.push(column);
            self.opened()?;
        }
        Ok(())
    }

    /// Block collections end where a token stands left of them.
    fn unroll(&mut self, column: usize) {
        if self.flow == 0 {
            while self.indents.last().is_some_and(|&top| top > column) {
                self.indents.pop();
            }
        }
    }

    /// The innermost block collection's column plus one: where a
    /// continued plain scalar or a block scalar's text must stand.
    fn min_indent(&self) -> usize {
        self.indents.last().map_or(0, |top| top + 1)
    }

    fn run(mut self) -> Result<usize, TooDeep> {
        loop {
            self.skip_to_token();
            let Some(c) = self.at(0) else {
                return Ok(self.deepest);
            };
            let column = self.column();
            self.unroll(column);
            if column == 0 && c == b'%' {
                self.skip_to_break();
                continue;
            }
            if column == 0
                && (self.s[self.pos..].starts_with(b"---")
                    || self.s[self.pos..].starts_with(b"..."))
                && self.blankz(3)
            {
                self.indents.clear();
                self.pos += 3;
                self.key_allowed = true;
                self.key = None;
                continue;
            }
            match c {
                b'[' | b'{' => {
                    self.save_key(column);
                    self.flow += 1;
                    self.opened()?;
                    self.pos += 1;
                    self.key_allowed = true;
                }
                b']' | b'}' => {
                    self.flow = self.flow.saturating_sub(1);
                    self.pos += 1;
                    self.key_allowed = false;
                }
                b',' => {
                    self.pos += 1;
                    self.key_allowed = true;
                }
                b'-' if self.blankz(1) => {
                    self.roll(column)?;
                    self.pos += 1;
                    self.key_allowed = true;
                }
                b'?' if self.flow > 0 || self.blankz(1) => {
                    self.roll(column)?;
                    self.pos += 1;
                    self.key_allowed = true;
                }
                b':' if self.flow > 0 || self.blankz(1) => {
                    if let Some((line, col)) = self.key.take()
                        && line == self.line
                    {
                        self.roll(col)?;
                    }
                    self.pos += 1;
                    self.key_allowed = self.flow == 0;
                }
                b'*' | b'&' => {
                    self.save_key(column);
                    self.pos += 1;
                    while self
                        .at(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
                    {
                        self.pos += 1;
                    }
                    self.key_allowed = false;
                }
                b'!' => {
                    // A tag runs to a blank ('[' and ']' are URI
                    // characters in it); anything else after it is an
                    // error of the parser's.
                    self.save_key(column);
                    while self.at(0).is_some_and(|c| {
                        !(is_blank(c) || is_break(c) || (self.flow > 0 && c == b','))
                    }) {
                        self.pos += 1;
                    }
                    self.key_allowed = false;
                }
                b'|' | b'>' if self.flow == 0 => self.block_scalar(),
                b'\'' | b'"' => {
                    self.save_key(column);
                    self.quoted(c);
                    self.key_allowed = false;
                }
                _ => {
                    self.save_key(column);
                    // A plain scalar that ended at a line's start leaves a
                    // key possible there.
                    self.key_allowed = self.plain();
                }
            }
        }
    }

    /// A token that may be a mapping's key starts at `column`.
    fn save_key(&mut self, column: usize) {
        if self.key_allowed {
            self.key = Some((self.line, column));
        }
    }

    /// Skips blanks, line breaks and comments (a `#` where a token
    /// would start is a comment).
    fn skip_to_token(&mut self) {
        loop {
            match self.at(0) {
                Some(c) if is_blank(c) => self.pos += 1,
                Some(b'#') => self.skip_to_break(),
                Some(c) if is_break(c) => {
                    self.bump();
                    if self.flow == 0 {
                        self.key_allowed = true;
                    }
                }
                _ => return,
            }
        }
    }

    /// A quoted scalar, over lines: `''` is a quote in single quotes,
    /// `\` escapes the next character in double quotes.
    fn quoted(&mut self, quote: u8) {
        self.pos += 1;
        while let Some(c) = self.at(0) {
            if c == quote {
                if quote == b'\'' && self.at(1) == Some(b'\'') {
                    self.pos += 2;
                    continue;
                }
                self.pos += 1;
                return;
            }
            if quote == b'"' && c == b'\\' {
                self.pos += 1;
                if self.at(0).is_some_and(|c| !is_break(c)) {
                    self.pos += 1;
                    continue;
                }
            }
            self.bump();
        }
    }

    /// A plain scalar, as libyaml ends one: at `: ` (or `:` at the end),
    /// in flow context at `,[]{}`, at ` #`, at a document marker, and in
    /// block context at a line less indented than its collection's
    /// content. Whether it ended after a line break.
    fn plain(&mut self) -> bool {
        let mut crossed = false;
        loop {
            if self.column() == 0
                && (self.s[self.pos..].starts_with(b"---")
                    || self.s[self.pos..].starts_with(b"..."))
                && self.blankz(3)
            {
                return crossed;
            }
            if self.at(0) == Some(b'#') {
                return crossed;
            }
            crossed = false;
            while let Some(c) = self.at(0) {
                if is_blank(c) || is_break(c) {
                    break;
                }
                if c == b':' && self.blankz(1) {
                    return false;
                }
                if self.flow > 0 && matches!(c, b',' | b'[' | b']' | b'{' | b'}') {
                    return false;
                }
                if self.flow > 0
                    && c == b':'
                    && self
                        .at(1)
                        .is_some_and(|n| matches!(n, b',' | b'?' | b'[' | b']' | b'{' | b'}'))
                {
                    // The parser refuses this; what follows is counted as
                    // if the scalar ended here.
                    return false;
                }
                self.pos += 1;
            }
            // Blanks and breaks: the scalar goes on past them unless the
            // next line stands left of its collection's content.
            while let Some(c) = self.at(0) {
                if is_blank(c) {
                    self.pos += 1;
                } else if is_break(c) {
                    self.bump();
                    crossed = true;
                } else {
                    break;
                }
            }
            if self.at(0).is_none() {
                return crossed;
            }
            if crossed && self.flow == 0 && self.column() < self.min_indent() {
                return true;
            }
        }
    }

    /// A literal or folded block scalar: its header, then the lines
    /// indented at least as its first text line (or left empty).
    fn block_scalar(&mut self) {
        self.pos += 1;
        let mut explicit = None;
        while let Some(c) = self.at(0) {
            match c {
                b'1'..=b'9' => explicit = Some(usize::from(c - b'0')),
                b'+' | b'-' => {}
                _ => break,
            }
            self.pos += 1;
        }
        self.skip_to_break();
        self.bump();
        let parent = self.indents.last().copied();
        let mut indent = explicit.map(|n| parent.map_or(n, |p| p + n));
        // Without an explicit indentation, the scalar's is the deepest of
        // its leading empty lines and its first text line.
        let mut leading = 0;
        self.key_allowed = true;
        // The lines of the scalar: each empty or indented enough.
        loop {
            let start = self.pos;
            let mut col = 0;
            while self.s.get(start + col) == Some(&b' ') {
                col += 1;
            }
            match self.s.get(start + col) {
                None => {
                    self.pos = start + col;
                    return;
                }
                Some(&c) if is_break(c) => {
                    leading = leading.max(col);
                    self.pos = start + col;
                    self.bump();
                    continue;
                }
                Some(_) => {}
            }
            let wanted =
                *indent.get_or_insert_with(|| col.max(leading).max(self.min_indent()).max(1));
            if col < wanted {
                // Not the scalar's: the cursor stays at the line's start.
                self.pos = start;
                return;
            }
            self.pos = start;
            self.skip_to_break();
            self.bump();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn nested_json(n: usize) -> String {
        format!("{}1{}", "[".repeat(n), "]".repeat(n))
    }

    fn nested_block(n: usize) -> String {
        let mut s = String::new();
        for i in 0..n {
            s.push_str(&"  ".repeat(i));
            s.push_str("a:\n");
        }
        s.push_str(&"  ".repeat(n));
        s.push_str("b: 1\n");
        s
    }

    #[rstest]
    #[case::scalar("1", 0)]
    #[case::json_object(r#"{"a": 1}"#, 1)]
    #[case::json_nested(r#"{"a": {"b": [1, {"c": []}]}}"#, 5)]
    #[case::json_compact(r#"{"a":{"b":[1,{"c":[]}]}}"#, 5)]
    #[case::json_brackets_in_strings(r#"{"a": "[[[{{{", "b": "\"[["}"#, 1)]
    #[case::yaml_single_quotes("a: '[[[{{ it''s [['\n", 1)]
    #[case::yaml_plain_brackets("a: x[1] [[[[ {{{{\nb: c\n", 1)]
    #[case::yaml_plain_quote("a: it's [[[[\n", 1)]
    #[case::yaml_comment("a: 1 # [[[[{{{{\n# [[[[\n", 1)]
    #[case::yaml_flow_in_block("a:\n  b: [1, {c: [2]}]\n", 5)]
    #[case::yaml_sequence_of_maps("- name: a\n  cpus: 2\n- name: b\n", 2)]
    #[case::yaml_compact_sequences("- - - x\n", 3)]
    #[case::yaml_indentless_sequence("a:\n- 1\n- 2\n", 1)]
    #[case::yaml_literal("a: |\n  [[[[ {{{{\n  \"x\n\nb: 1\n", 1)]
    #[case::yaml_folded_keep(">+\n [[[[\n", 0)]
    #[case::yaml_tag_and_anchor("a: &x !!map {b: [1]}\nc: *x\n", 3)]
    #[case::yaml_url("url: http://x.example/[a]\n", 1)]
    #[case::yaml_documents("---\na:\n  b: 1\n---\n- 1\n", 2)]
    #[case::nested_json_deep(&nested_json(128), 128)]
    #[case::nested_block_deep(&nested_block(127), 128)]
    fn measures_nesting(#[case] text: &str, #[case] depth: usize) {
        assert_eq!(deepest(text, MAX_DEPTH), Ok(depth), "{text}");
    }

    #[rstest]
    #[case::json_arrays(&nested_json(129), 1)]
    #[case::json_objects(&r#"{"a":"#.repeat(400_000), 1)]
    #[case::yaml_flow_over_lines(&"[\n".repeat(200), 129)]
    #[case::yaml_indentation(&nested_block(200), 129)]
    #[case::yaml_sequences(&format!("{}x\n", "- ".repeat(200)), 1)]
    #[case::yaml_keys(&format!("{}x\n", "? ".repeat(200)), 1)]
    // A quote inside a plain scalar, continued on the next line, opens
    // nothing: the brackets after it count.
    #[case::quote_in_continued_plain(&format!("a: x\n  \"\nb: {}\n", "[".repeat(200)), 3)]
    #[case::quote_in_flow_plain(&format!("[a\"{}", "[".repeat(200)), 1)]
    #[case::quote_after_flow_plain_colon(&format!("{{a:\"{}", "[".repeat(200)), 1)]
    #[case::after_block_scalar(&format!("a: |\n  x\nb: {}\n", "[".repeat(200)), 3)]
    // Leading empty lines deeper than the first text line make the
    // scalar empty: that line is the document's again.
    #[case::after_empty_block_scalar(&format!("a: |\n      \n  b: {}\n", "[".repeat(200)), 3)]
    fn refuses_deep_nesting(#[case] text: &str, #[case] line: usize) {
        assert_eq!(
            deepest(text, MAX_DEPTH),
            Err(TooDeep {
                line,
                limit: MAX_DEPTH
            })
        );
    }

    /// Whatever YAML's parser reads, the scan finds at least as deep.
    #[rstest]
    #[case("a:\n  b:\n    - [1, [2, [3]]]\n    - {x: {y: z}}\n")]
    #[case("- - - [a, {b: [c]}]\n")]
    #[case("? [a, [b]]\n: {c: [d]}\n")]
    #[case("a: &x [1, [2]]\nb: *x\n")]
    #[case("{\"a\": [{\"b\": {\"c\": [[1]]}}]}")]
    #[case("a: >\n  text\n  more\nb:\n  - c:\n      d: [1]\n")]
    fn never_counts_less_than_the_parser(#[case] text: &str) {
        fn depth(v: &serde_yaml::Value) -> usize {
            match v {
                serde_yaml::Value::Sequence(s) => 1 + s.iter().map(depth).max().unwrap_or(0),
                serde_yaml::Value::Mapping(m) => {
                    1 + m
                        .iter()
                        .map(|(k, v)| depth(k).max(depth(v)))
                        .max()
                        .unwrap_or(0)
                }
                serde_yaml::Value::Tagged(t) => depth(&t.value),
                _ => 0,
            }
        }
        let parsed: serde_yaml::Value = serde_yaml::from_str(text).expect("YAML");
        let scanned = deepest(text, MAX_DEPTH).expect("not too deep");
        assert!(
            scanned >= depth(&parsed),
            "{scanned} < {} for {text}",
            depth(&parsed)
        );
    }

    #[test]
    fn the_example_scenarios_pass() {
        for file in ["single-node.yaml", "three-node-cluster.yaml"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(file);
            let text = std::fs::read_to_string(&path).expect("scenario file");
            let d = deepest(&text, MAX_DEPTH).expect("shallow");
            assert!((2..10).contains(&d), "{file}: {d}");
        }
    }
}
