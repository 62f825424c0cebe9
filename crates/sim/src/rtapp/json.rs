//! rt-app's JSON read leniently (comments, trailing commas) into a tree whose objects keep their keys in document order, and the typed access to it that names the key on every error.

use super::*;

/// A JSON value whose objects keep their keys in document order: rt-app runs a body's events in
/// the order they are written, which serde_json's own map would not keep.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

impl Node {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Int(_) => "an integer",
            Node::Float(_) => "a fraction",
            Node::Str(_) => "a string",
            Node::Arr(_) => "an array",
            Node::Obj(_) => "an object",
        }
    }

    pub(super) fn obj(entries: Vec<(&str, Node)>) -> Node {
        Node::Obj(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }
}

pub(super) struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(i64::try_from(v).map_or(Node::Float(v as f64), Node::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<String, Node>()? {
            entries.push(entry);
        }
        Ok(Node::Obj(entries))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Null => s.serialize_unit(),
            Node::Bool(b) => s.serialize_bool(*b),
            Node::Int(i) => s.serialize_i64(*i),
            Node::Float(x) => s.serialize_f64(*x),
            Node::Str(v) => s.serialize_str(v),
            Node::Arr(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Node::Obj(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// Copies a string literal whose opening quote was just read, escapes included.
pub(super) fn copy_string(chars: &mut impl Iterator<Item = char>, out: &mut String) {
    out.push('"');
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\\' => out.extend(chars.next()),
            '"' => return,
            _ => {}
        }
    }
}

/// Removes `/* */` and `//` comments outside strings, keeping line breaks (so serde_json's
/// line numbers still point into the original text).
pub(super) fn strip_comments(text: &str) -> Result<String, RtAppError> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => copy_string(&mut chars, &mut out),
            '/' if chars.peek() == Some(&'/') => {
                if chars.by_ref().any(|c| c == '\n') {
                    out.push('\n');
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let (mut prev, mut closed) = (' ', false);
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && c == '/' {
                        closed = true;
                        break;
                    }
                    prev = c;
                }
                if !closed {
                    return Err(RtAppError::new(None, "json", "a /* comment is not closed"));
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// Removes commas that close an object or array (`[1, 2,]`), outside strings.
pub(super) fn strip_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.get(i + 1));
                i += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == ',' && matches!(chars[i + 1..].iter().find(|c| !c.is_whitespace()), Some('}' | ']')) {
            // Dropped: a trailing comma.
        } else {
            in_string = c == '"';
            out.push(c);
        }
        i += 1;
    }
    out
}

/// Parses rt-app's JSON dialect (comments, trailing commas) into ordered nodes.
pub(super) fn parse_document(text: &str) -> Result<Node, RtAppError> {
    let clean = strip_trailing_commas(&strip_comments(text)?);
    serde_json::from_str(&clean).map_err(|e| RtAppError::new(None, "json", e.to_string()))
}

/// Where a value sits, for error messages: the task and the key path.
#[derive(Clone, Copy)]
pub(super) struct At<'a> {
    pub(super) task: Option<&'a str>,
    pub(super) key: &'a str,
}

impl At<'_> {
    pub(super) fn err(self, message: impl Into<String>) -> RtAppError {
        RtAppError::new(self.task, self.key, message)
    }
}

/// An object's entries; a key given twice is refused (json-c keeps only one of them).
pub(super) fn entries<'n>(node: &'n Node, at: At) -> Result<&'n [(String, Node)], RtAppError> {
    let Node::Obj(entries) = node else {
        return Err(at.err(format!("must be an object, got {}", node.kind())));
    };
    for (i, (k, _)) in entries.iter().enumerate() {
        if entries[..i].iter().any(|(p, _)| p == k) {
            let key = if at.key.is_empty() { k.clone() } else { format!("{}.{k}", at.key) };
            return Err(RtAppError::new(
                at.task,
                key,
                "given twice: rt-app keeps only one; number repeated events (run0, run1, …)",
            ));
        }
    }
    Ok(entries)
}

/// An integer as rt-app reads one (json-c's 32-bit `json_object_get_int`).
pub(super) fn int(node: &Node, at: At) -> Result<i64, RtAppError> {
    match node {
        Node::Int(i) if i32::try_from(*i).is_ok() => Ok(*i),
        Node::Int(i) => Err(at.err(format!("{i} does not fit rt-app's 32-bit integers"))),
        other => Err(at.err(format!("must be an integer, got {}", other.kind()))),
    }
}

pub(super) fn string(node: &Node, at: At) -> Result<String, RtAppError> {
    match node {
        Node::Str(s) => Ok(s.clone()),
        other => Err(at.err(format!("must be a string, got {}", other.kind()))),
    }
}

/// A non-negative time in µs, as ns.
pub(super) fn micros(node: &Node, at: At) -> Result<Dur, RtAppError> {
    let us = int(node, at)?;
    if us < 0 {
        return Err(at.err(format!("negative time {us} µs")));
    }
    Ok(us as Dur * US)
}

/// How many times a body runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loop {
    Times(u64),
    Forever,
}

impl Loop {
    pub(super) fn parse(node: &Node, at: At) -> Result<Loop, RtAppError> {
        match int(node, at)? {
            -1 => Ok(Loop::Forever),
            n if n > 0 => Ok(Loop::Times(n as u64)),
            n => Err(at.err(format!("{n}: a loop is a positive count or -1 (until global.duration)"))),
        }
    }

    /// The iteration count, `u64::MAX` standing for ever (the caller stops at the duration).
    pub(super) fn count(self) -> u64 {
        match self {
            Loop::Times(n) => n,
            Loop::Forever => u64::MAX,
        }
    }
}
