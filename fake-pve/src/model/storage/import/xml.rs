//! A small namespace-aware XML tree, enough for the queries PVE's OVF
//! reader makes (`findvalue`/`findnodes` with registered prefixes).

use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

/// An attribute: its namespace (as bound where it appears), local name,
/// name as written, and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    /// The namespace URI, if the name has a prefix.
    pub ns: Option<String>,
    /// The local name.
    pub local: String,
    /// The name as written (`ovf:id`).
    pub qname: String,
    /// The value, references resolved.
    pub value: String,
}

/// An element with its children and text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    /// The namespace URI (a default namespace applies).
    pub ns: Option<String>,
    /// The local name.
    pub local: String,
    /// Attributes in document order.
    pub attrs: Vec<Attr>,
    /// Child elements and text, in document order.
    pub children: Vec<Child>,
}

/// A child of an element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Child {
    /// An element.
    Element(Element),
    /// Character data.
    Text(String),
}

impl Element {
    /// Whether the element is `{ns}local`.
    pub fn is(&self, ns: &str, local: &str) -> bool {
        self.ns.as_deref() == Some(ns) && self.local == local
    }

    /// The child elements `{ns}local`.
    pub fn children<'a>(
        &'a self,
        ns: &'a str,
        local: &'a str,
    ) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter_map(move |c| match c {
            Child::Element(e) if e.is(ns, local) => Some(e),
            _ => None,
        })
    }

    /// The attribute `{ns}local` (`ns` `None`: an unprefixed one).
    pub fn attr(&self, ns: Option<&str>, local: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.ns.as_deref() == ns && a.local == local)
            .map(|a| a.value.as_str())
    }

    /// The XPath string value: the text of all descendants.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.collect_text(&mut out);
        out
    }

    fn collect_text(&self, out: &mut String) {
        for c in &self.children {
            match c {
                Child::Text(t) => out.push_str(t),
                Child::Element(e) => e.collect_text(out),
            }
        }
    }

    /// `findvalue` of a child path: the string values of every child
    /// `{ns}local`, joined (as a node list's literal is).
    pub fn child_value(&self, ns: &str, local: &str) -> String {
        self.children(ns, local).map(Element::text).collect()
    }
}

fn ns_of(r: &ResolveResult<'_>) -> Result<Option<String>, String> {
    match r {
        ResolveResult::Bound(ns) => Ok(Some(String::from_utf8_lossy(ns.0).into_owned())),
        ResolveResult::Unbound => Ok(None),
        ResolveResult::Unknown(p) => Err(format!(
            "Namespace prefix {} is not defined",
            String::from_utf8_lossy(p)
        )),
    }
}

fn entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix('x') {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

/// Parses a document into its root element.
///
/// # Errors
/// What is not well-formed XML, an entity that is not predefined (no
/// document type is read), or no root element.
pub fn parse(text: &str) -> Result<Element, String> {
    let mut reader = NsReader::from_str(text);
    reader.config_mut().trim_text(false);
    let mut stack: Vec<Element> = Vec::new();
    let mut root = None;
    loop {
        let pos = reader.buffer_position();
        let (res, ev) = reader
            .read_resolved_event()
            .map_err(|e| format!("XML error at byte {pos}: {e}"))?;
        let ns = ns_of(&res)?;
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let mut el = Element {
                    ns,
                    local: String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                    ..Element::default()
                };
                for a in e.attributes() {
                    let a = a.map_err(|e| format!("XML error at byte {pos}: {e}"))?;
                    let key = a.key;
                    if key.as_ref() == b"xmlns" || key.as_ref().starts_with(b"xmlns:") {
                        continue;
                    }
                    let (r, local) = reader.resolver().resolve_attribute(key);
                    let value = a
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .map_err(|e| format!("XML error at byte {pos}: {e}"))?;
                    el.attrs.push(Attr {
                        ns: ns_of(&r)?,
                        local: String::from_utf8_lossy(local.as_ref()).into_owned(),
                        qname: String::from_utf8_lossy(key.as_ref()).into_owned(),
                        value: value.into_owned(),
                    });
                }
                if matches!(ev, Event::Start(_)) {
                    stack.push(el);
                } else if let Some(parent) = stack.last_mut() {
                    parent.children.push(Child::Element(el));
                } else if root.is_none() {
                    root = Some(el);
                }
            }
            Event::End(_) => {
                let Some(el) = stack.pop() else {
                    return Err(format!("XML error at byte {pos}: unexpected end tag"));
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(Child::Element(el)),
                    None => root = Some(el),
                }
            }
            Event::Text(t) => {
                if let Some(parent) = stack.last_mut() {
                    let s = t
                        .decode()
                        .map_err(|e| format!("XML error at byte {pos}: {e}"))?;
                    parent.children.push(Child::Text(s.into_owned()));
                }
            }
            Event::CData(t) => {
                if let Some(parent) = stack.last_mut() {
                    let s = String::from_utf8_lossy(&t).into_owned();
                    parent.children.push(Child::Text(s));
                }
            }
            Event::GeneralRef(r) => {
                let name = String::from_utf8_lossy(&r).into_owned();
                let Some(c) = entity(&name) else {
                    return Err(format!("Entity '{name}' not defined"));
                };
                if let Some(parent) = stack.last_mut() {
                    parent.children.push(Child::Text(c.to_string()));
                }
            }
            Event::DocType(d) => {
                if String::from_utf8_lossy(&d).contains("<!ENTITY") {
                    return Err("entity declarations are not allowed".into());
                }
            }
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err("Premature end of data".into());
    }
    root.ok_or_else(|| "Document is empty".into())
}
