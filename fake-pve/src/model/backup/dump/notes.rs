//! A backup's notes: the `notes-template` checked and filled in.

/// Why `verify_notes_template` refuses a template, in its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotesTemplateError {
    /// A literal line feed (`\n` is written as an escape).
    #[error("contains a line feed")]
    LineFeed,
    /// Unknown escapes and variables, each with where it is
    /// (`variable 'x' at char 2`).
    #[error("found unknown: {}", .0.join(", "))]
    Unknown(Vec<String>),
}

/// `verify_notes_template`.
///
/// # Errors
/// `contains a line feed`, `found unknown: ...`.
pub fn verify_notes_template(t: &str) -> std::result::Result<(), NotesTemplateError> {
    if t.contains('\n') {
        return Err(NotesTemplateError::LineFeed);
    }
    let mut problems = Vec::new();
    let chars: Vec<char> = t.chars().collect();
    let mut i = 0;
    while i + 1 < chars.len() {
        if chars[i] == '\\' {
            let c = chars[i + 1];
            if c != 'n' && c != '\\' {
                problems.push(format!("escape sequence '\\{c}' at char {i}"));
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    let mut rest = t;
    let mut offset = 0;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let var = &after[..end];
        if !var.is_empty() && !var.contains(|c: char| c.is_whitespace() || c == '{' || c == '}') {
            if !["cluster", "guestname", "node", "vmid"].contains(&var) {
                problems.push(format!("variable '{var}' at char {}", offset + start + 2));
            }
            offset += start + 2 + end + 2;
            rest = &after[end + 2..];
        } else {
            offset += start + 1;
            rest = &rest[start + 1..];
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(NotesTemplateError::Unknown(problems))
    }
}

/// `generate_notes`: the template with its variables and escapes filled.
pub fn render_notes(t: &str, cluster: &str, guestname: &str, node: &str, vmid: u32) -> String {
    let mut out = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out.replace("{{cluster}}", cluster)
        .replace("{{guestname}}", guestname)
        .replace("{{node}}", node)
        .replace("{{vmid}}", &vmid.to_string())
}
