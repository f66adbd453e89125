//! What runs behind a console, as a terminal sees it: a login prompt,
//! then a shell that answers a few commands from the model. Sans I/O:
//! keystrokes in, bytes to print and requests out. The commands that
//! read the API (`qm list`, `pct list`, `pvesh get`) ask for a `GET`,
//! which the caller answers with [`Terminal::answered`].
//!
//! - A node's shell knows `hostname`, `uptime`, `pveversion [-v]`, `qm list`,
//!   `pct list`, `pvesh get PATH`, `echo`, `clear`, `exit`.
//! - A guest's console shows its login prompt; once logged in, its shell
//!   knows `hostname`, `echo`, `clear` and `exit`.
//! - Anything else is answered as bash answers an unknown command.

use serde_json::Value;

/// What the terminal asks of its caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Bytes to show.
    Print(Vec<u8>),
    /// `GET /api2/json<path>` as root@pam; the answer goes to
    /// [`Terminal::answered`] with `then`.
    Get(String, Then),
    /// Whether `user` logs in with `password` on the node; the answer
    /// goes to [`Terminal::logged_in`].
    Login(String, String),
    /// The program ended: the connection closes.
    Exit,
}

/// What an API answer is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Then {
    /// `qm list`.
    QmList,
    /// `pct list`.
    PctList,
    /// `pvesh get`, in this output format.
    Pvesh(Format),
}

/// `pvesh`'s `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tables (the default).
    Text,
    /// JSON on one line.
    Json,
    /// Indented JSON.
    JsonPretty,
}

/// Facts a shell answers from, given when it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The host name shown in prompts and by `hostname`.
    pub host: String,
    /// `pveversion`'s line (a node's shell).
    pub pveversion: String,
    /// `pveversion --verbose`'s lines (a node's shell).
    pub pveversion_verbose: String,
    /// `uptime`'s line (a node's shell), without its clock.
    pub uptime: String,
    /// `uname -a`'s line shown on login (a node's shell).
    pub uname: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// Waiting for a user name.
    User,
    /// Waiting for `user`'s password (not echoed).
    Password(String),
    /// Waiting for the login check.
    Checking,
    /// Logged in.
    Shell,
    /// Waiting for an API answer.
    Busy,
    /// Ended.
    Gone,
}

/// Which shell it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A node's shell.
    Node,
    /// A guest's console.
    Guest,
}

/// One terminal session.
#[derive(Debug, Clone)]
pub struct Terminal {
    kind: Kind,
    facts: Facts,
    mode: Mode,
    line: Vec<u8>,
    /// The previous byte was a carriage return (a CR LF is one Enter).
    after_cr: bool,
}

impl Terminal {
    /// A node's shell: root logged in already (`login -f root`), or
    /// `/bin/login`'s prompt. With what it prints first.
    pub fn node(facts: Facts, root: bool) -> (Self, Vec<u8>) {
        let mut t = Self::new(Kind::Node, facts);
        let first = if root {
            t.mode = Mode::Shell;
            t.welcome()
        } else {
            t.login_prompt()
        };
        (t, first)
    }

    /// A guest's console at its login prompt, after `banner` (what the
    /// guest printed before it).
    pub fn guest(facts: Facts, banner: &str) -> (Self, Vec<u8>) {
        let t = Self::new(Kind::Guest, facts);
        let mut first = banner.replace('\n', "\r\n").into_bytes();
        first.extend(t.login_prompt());
        (t, first)
    }

    fn new(kind: Kind, facts: Facts) -> Self {
        Self {
            kind,
            facts,
            mode: Mode::User,
            line: Vec::new(),
            after_cr: false,
        }
    }

    fn login_prompt(&self) -> Vec<u8> {
        format!("\r\n{} login: ", self.facts.host).into_bytes()
    }

    fn prompt(&self) -> Vec<u8> {
        format!("root@{}:~# ", self.facts.host).into_bytes()
    }

    fn welcome(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if !self.facts.uname.is_empty() {
            out.extend(format!("{}\r\n\r\n", self.facts.uname).into_bytes());
        }
        out.extend(self.prompt());
        out
    }

    /// What it answers from.
    pub fn facts(&self) -> &Facts {
        &self.facts
    }

    /// Sets `uptime`'s line (it changes with the clock).
    pub fn set_uptime(&mut self, line: String) {
        self.facts.uptime = line;
    }

    /// Whether it ended.
    #[cfg(any(test, feature = "internals"))]
    pub fn gone(&self) -> bool {
        self.mode == Mode::Gone
    }

    /// Reads keystrokes (a terminal's bytes: Enter is CR, Backspace DEL
    /// or BS; escape sequences are dropped).
    pub fn input(&mut self, bytes: &[u8]) -> Vec<Action> {
        let mut out = Vec::new();
        let mut echo = Vec::new();
        let mut skip_escape = false;
        for &b in bytes {
            if matches!(self.mode, Mode::Gone | Mode::Busy | Mode::Checking) {
                break;
            }
            if skip_escape {
                skip_escape = !(0x40..=0x7e).contains(&b) || b == b'[';
                continue;
            }
            let cr_lf = self.after_cr && b == b'\n';
            self.after_cr = b == b'\r';
            match b {
                _ if cr_lf => {}
                b'\r' | b'\n' => {
                    if !echo.is_empty() {
                        out.push(Action::Print(std::mem::take(&mut echo)));
                    }
                    let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).to_string();
                    out.extend(self.enter(line.trim()));
                }
                0x7f | 0x08 => self.backspace(&mut echo),
                0x03 => {
                    self.line.clear();
                    echo.extend_from_slice(b"^C\r\n");
                    echo.extend(if self.mode == Mode::Shell {
                        self.prompt()
                    } else {
                        self.login_prompt()
                    });
                }
                0x04 if self.line.is_empty() && self.mode == Mode::Shell => {
                    echo.extend_from_slice(b"logout\r\n");
                    self.mode = Mode::Gone;
                    out.push(Action::Print(std::mem::take(&mut echo)));
                    out.push(Action::Exit);
                }
                0x1b => skip_escape = true,
                0x20..=0x7e => {
                    self.line.push(b);
                    if self.echoes() {
                        echo.push(b);
                    }
                }
                _ => {}
            }
        }
        if !echo.is_empty() {
            out.push(Action::Print(echo));
        }
        out
    }

    /// Backspace: the last character typed goes, and from the screen
    /// when it was shown.
    fn backspace(&mut self, echo: &mut Vec<u8>) {
        if self.line.pop().is_some() && self.echoes() {
            echo.extend_from_slice(b"\x08 \x08");
        }
    }

    fn echoes(&self) -> bool {
        !matches!(self.mode, Mode::Password(_))
    }

    /// An entered line.
    fn enter(&mut self, line: &str) -> Vec<Action> {
        match std::mem::replace(&mut self.mode, Mode::Shell) {
            Mode::User => {
                if line.is_empty() {
                    self.mode = Mode::User;
                    return vec![Action::Print(self.login_prompt())];
                }
                self.mode = Mode::Password(line.to_string());
                vec![Action::Print(b"\r\nPassword: ".to_vec())]
            }
            Mode::Password(user) => match self.kind {
                Kind::Node => {
                    self.mode = Mode::Checking;
                    vec![Action::Login(user, line.to_string())]
                }
                // A guest's accounts are its own: any password opens it.
                Kind::Guest => {
                    let mut out = b"\r\n".to_vec();
                    out.extend(self.welcome());
                    vec![Action::Print(out)]
                }
            },
            Mode::Shell => self.command(line),
            other => {
                self.mode = other;
                Vec::new()
            }
        }
    }

    /// The answer to [`Action::Login`].
    pub fn logged_in(&mut self, ok: bool) -> Vec<Action> {
        if ok {
            self.mode = Mode::Shell;
            let mut out = b"\r\n".to_vec();
            out.extend(self.welcome());
            vec![Action::Print(out)]
        } else {
            self.mode = Mode::User;
            let mut out = b"\r\n\r\nLogin incorrect".to_vec();
            out.extend(self.login_prompt());
            vec![Action::Print(out)]
        }
    }

    /// A command line of the shell.
    fn command(&mut self, line: &str) -> Vec<Action> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let node = self.kind == Kind::Node;
        let text = |t: String| {
            let mut v = b"\r\n".to_vec();
            if !t.is_empty() {
                v.extend(t.replace('\n', "\r\n").into_bytes());
                v.extend_from_slice(b"\r\n");
            }
            v
        };
        let out = match words.as_slice() {
            [] => b"\r\n".to_vec(),
            ["exit" | "logout", ..] => {
                self.mode = Mode::Gone;
                return vec![Action::Print(b"\r\nlogout\r\n".to_vec()), Action::Exit];
            }
            ["hostname"] => text(self.facts.host.clone()),
            ["echo", rest @ ..] => text(rest.join(" ")),
            ["clear"] => b"\r\n\x1b[H\x1b[2J".to_vec(),
            ["pveversion"] if node => text(self.facts.pveversion.clone()),
            ["pveversion", "-v" | "--verbose"] if node => text(
                self.facts
                    .pveversion_verbose
                    .trim_end_matches('\n')
                    .to_string(),
            ),
            ["uptime"] if node => text(self.facts.uptime.clone()),
            ["qm", "list"] if node => {
                return self.get(format!("/nodes/{}/qemu", self.facts.host), Then::QmList);
            }
            ["pct", "list"] if node => {
                return self.get(format!("/nodes/{}/lxc", self.facts.host), Then::PctList);
            }
            ["pvesh", "get", path, opts @ ..] if node => {
                let format = match opts {
                    [] => Some("text"),
                    ["--output-format", f] => Some(*f),
                    [o] => o.strip_prefix("--output-format="),
                    _ => None,
                };
                let format = match format {
                    Some("text") => Some(Format::Text),
                    Some("json") => Some(Format::Json),
                    Some("json-pretty") => Some(Format::JsonPretty),
                    _ => None,
                };
                match format {
                    Some(f) => {
                        let path = format!("/{}", path.trim_start_matches('/'));
                        return self.get(path, Then::Pvesh(f));
                    }
                    None => text(format!(
                        "400 unable to parse option\npvesh get {path} [OPTIONS]"
                    )),
                }
            }
            ["pvesh", ..] if node => text("USAGE: pvesh get <api_path> [OPTIONS]".into()),
            [cmd, ..] => text(format!("-bash: {cmd}: command not found")),
        };
        let mut out = out;
        out.extend(self.prompt());
        vec![Action::Print(out)]
    }

    fn get(&mut self, path: String, then: Then) -> Vec<Action> {
        self.mode = Mode::Busy;
        vec![Action::Get(path, then)]
    }

    /// The answer to [`Action::Get`]: the `data` of a `GET`, or its
    /// error's message.
    pub fn answered(&mut self, then: &Then, answer: Result<Value, String>) -> Vec<Action> {
        if self.mode == Mode::Busy {
            self.mode = Mode::Shell;
        }
        let body = match (then, answer) {
            (_, Err(e)) => e,
            (Then::QmList, Ok(v)) => qm_list(&v),
            (Then::PctList, Ok(v)) => pct_list(&v),
            (Then::Pvesh(Format::Json), Ok(v)) => v.to_string(),
            (Then::Pvesh(Format::JsonPretty), Ok(v)) => {
                serde_json::to_string_pretty(&v).unwrap_or_default()
            }
            (Then::Pvesh(Format::Text), Ok(v)) => text_table(&v),
        };
        let mut out = b"\r\n".to_vec();
        let body = body.trim_end_matches('\n');
        if !body.is_empty() {
            out.extend(body.replace('\n', "\r\n").into_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend(self.prompt());
        vec![Action::Print(out)]
    }
}

fn sorted_by_vmid(v: &Value) -> Vec<&Value> {
    let mut list: Vec<&Value> = v.as_array().map(|a| a.iter().collect()).unwrap_or_default();
    list.sort_by_key(|g| g.get("vmid").and_then(Value::as_u64).unwrap_or(0));
    list
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key)
        .and_then(|x| {
            x.as_f64()
                .or_else(|| x.as_str().and_then(|s| s.parse().ok()))
        })
        .unwrap_or(0.0)
}

fn str_of(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// `qm list`: nothing for no VM, else its table.
fn qm_list(v: &Value) -> String {
    let list = sorted_by_vmid(v);
    if list.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "{:>10} {:<20} {:<10} {:<10} {:>12} {:<10}\n",
        "VMID", "NAME", "STATUS", "MEM(MB)", "BOOTDISK(GB)", "PID"
    );
    for g in list {
        let status = match str_of(g, "qmpstatus") {
            s if !s.is_empty() => s,
            _ => str_of(g, "status"),
        };
        let mem = num(g, "maxmem") / (1024.0 * 1024.0);
        let mem = if mem.fract() == 0.0 {
            format!("{mem:.0}")
        } else {
            format!("{mem}")
        };
        let pid = match str_of(g, "pid") {
            p if !p.is_empty() => p,
            _ => "0".into(),
        };
        out.push_str(&format!(
            "{:>10} {:<20} {:<10} {:<10} {:>12.2} {:<10}\n",
            str_of(g, "vmid"),
            str_of(g, "name"),
            status,
            mem,
            num(g, "maxdisk") / (1024.0 * 1024.0 * 1024.0),
            pid
        ));
    }
    out
}

/// `pct list`: nothing for no container, else its table.
fn pct_list(v: &Value) -> String {
    let list = sorted_by_vmid(v);
    if list.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "{:<10} {:<10} {:<12} {:<20}\n",
        "VMID", "Status", "Lock", "Name"
    );
    for g in list {
        out.push_str(&format!(
            "{:<10} {:<10} {:<12} {:<20}\n",
            str_of(g, "vmid"),
            str_of(g, "status"),
            str_of(g, "lock"),
            str_of(g, "name")
        ));
    }
    out
}

/// `pvesh`'s text output, with ASCII borders: a scalar as it is, an
/// object as key/value rows, a list of objects as a table of their keys.
fn text_table(v: &Value) -> String {
    let cell = |x: Option<&Value>| match x {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let (head, rows): (Vec<String>, Vec<Vec<String>>) = match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            (
                vec!["key".into(), "value".into()],
                keys.into_iter()
                    .map(|k| vec![k.clone(), cell(map.get(k))])
                    .collect(),
            )
        }
        Value::Array(items) if items.iter().all(Value::is_object) && !items.is_empty() => {
            let mut keys: Vec<String> = items
                .iter()
                .filter_map(Value::as_object)
                .flat_map(|m| m.keys().cloned())
                .collect();
            keys.sort();
            keys.dedup();
            let rows = items
                .iter()
                .map(|i| keys.iter().map(|k| cell(i.get(k))).collect())
                .collect();
            (keys, rows)
        }
        Value::Array(items) => return items.iter().map(|i| cell(Some(i)) + "\n").collect(),
        other => return cell(Some(other)),
    };
    let widths: Vec<usize> = head
        .iter()
        .enumerate()
        .map(|(i, h)| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([h.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let rule = |c: char| {
        let mut s = String::from("+");
        for w in &widths {
            s.push_str(&c.to_string().repeat(w + 2));
            s.push('+');
        }
        s.push('\n');
        s
    };
    let line = |cells: &[String]| {
        let mut s = String::from("|");
        for (c, w) in cells.iter().zip(&widths) {
            s.push_str(&format!(" {c:<w$} |"));
        }
        s.push('\n');
        s
    };
    let mut out = rule('-');
    out.push_str(&line(&head));
    out.push_str(&rule('='));
    for r in &rows {
        out.push_str(&line(r));
    }
    out.push_str(&rule('-'));
    out
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    fn facts() -> Facts {
        Facts {
            host: "pve".into(),
            pveversion: "pve-manager/9.2.11/abc (running kernel: 6.14)".into(),
            pveversion_verbose: "proxmox-ve: 9.2.0 (running kernel: 6.14)\npve-manager: 9.2.11\n"
                .into(),
            uptime: " 12:00:00 up 1 day".into(),
            uname: "Linux pve 6.14".into(),
        }
    }

    fn printed(actions: &[Action]) -> String {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Print(b) => Some(String::from_utf8_lossy(b).to_string()),
                _ => None,
            })
            .collect()
    }

    #[rstest]
    #[case("hostname\r", "\r\npve\r\nroot@pve:~# ")]
    #[case(
        "pveversion\r",
        "\r\npve-manager/9.2.11/abc (running kernel: 6.14)\r\nroot@pve:~# "
    )]
    #[case(
        "pveversion -v\r",
        "\r\nproxmox-ve: 9.2.0 (running kernel: 6.14)\r\npve-manager: 9.2.11\r\nroot@pve:~# "
    )]
    #[case("echo a  b\r", "\r\na b\r\nroot@pve:~# ")]
    #[case(
        "frobnicate -x\r",
        "\r\n-bash: frobnicate: command not found\r\nroot@pve:~# "
    )]
    #[case("\r", "\r\nroot@pve:~# ")]
    fn a_node_shell_answers_its_commands(#[case] keys: &str, #[case] want: &str) {
        let (mut t, first) = Terminal::node(facts(), true);
        assert!(String::from_utf8_lossy(&first).ends_with("root@pve:~# "));
        let out = t.input(keys.as_bytes());
        // The typed line is echoed first.
        let typed = keys.trim_end_matches('\r');
        assert_eq!(printed(&out), format!("{typed}{want}"));
    }

    #[test]
    fn backspace_edits_and_exit_ends() {
        let (mut t, _) = Terminal::node(facts(), true);
        let out = t.input(b"hostnamx\x7fe\r");
        assert!(printed(&out).contains("\r\npve\r\n"));
        let out = t.input(b"exit\r");
        assert_eq!(out.last(), Some(&Action::Exit));
        assert!(t.gone());
        assert!(t.input(b"hostname\r").is_empty());
    }

    #[test]
    fn api_commands_ask_and_print_the_answer() {
        let (mut t, _) = Terminal::node(facts(), true);
        let out = t.input(b"qm list\r");
        assert_eq!(
            out.last(),
            Some(&Action::Get("/nodes/pve/qemu".into(), Then::QmList))
        );
        // Keys typed while it runs are not read.
        assert!(t.input(b"x").is_empty());
        let vms = json!([
            {"vmid": 101, "name": "b", "status": "stopped", "maxmem": 536870912u64, "maxdisk": 0},
            {"vmid": 100, "name": "a", "status": "running", "maxmem": 2147483648u64,
             "maxdisk": 34359738368u64, "pid": 4242}
        ]);
        let out = printed(&t.answered(&Then::QmList, Ok(vms)));
        let want = "      VMID NAME                 STATUS     MEM(MB)    BOOTDISK(GB) PID       \r\n\
                    \x20      100 a                    running    2048              32.00 4242      \r\n\
                    \x20      101 b                    stopped    512                0.00 0         \r\n";
        assert_eq!(out, format!("\r\n{want}root@pve:~# "));
        let out = t.input(b"pvesh get version --output-format json\r");
        assert_eq!(
            out.last(),
            Some(&Action::Get("/version".into(), Then::Pvesh(Format::Json)))
        );
        let out = printed(&t.answered(
            &Then::Pvesh(Format::Json),
            Err("no such resource '/x'".into()),
        ));
        assert_eq!(out, "\r\nno such resource '/x'\r\nroot@pve:~# ");
    }

    #[test]
    fn pct_list_and_text_tables() {
        let cts = json!([{"vmid": 200, "status": "running", "name": "web"}]);
        assert_eq!(
            pct_list(&cts),
            "VMID       Status     Lock         Name                \n\
             200        running                 web                 \n"
        );
        assert_eq!(pct_list(&json!([])), "");
        assert_eq!(
            text_table(&json!({"b": 1, "a": "x"})),
            "+-----+-------+\n| key | value |\n+=====+=======+\n| a   | x     |\n| b   | 1     |\n+-----+-------+\n"
        );
    }

    #[test]
    fn login_asks_the_password_without_echo_and_retries_on_failure() {
        let (mut t, first) = Terminal::node(facts(), false);
        assert_eq!(first, b"\r\npve login: ");
        let out = t.input(b"root\r");
        assert_eq!(printed(&out), "root\r\nPassword: ");
        let out = t.input(b"bad\r");
        assert_eq!(out, vec![Action::Login("root".into(), "bad".into())]);
        let out = printed(&t.logged_in(false));
        assert_eq!(out, "\r\n\r\nLogin incorrect\r\npve login: ");
        t.input(b"root\r");
        t.input(b"good\r");
        let out = printed(&t.logged_in(true));
        assert!(out.ends_with("root@pve:~# "), "{out}");
    }

    #[test]
    fn a_guest_console_logs_in_to_a_prompt_named_after_it() {
        let mut f = facts();
        f.host = "web1".into();
        f.uname = String::new();
        let (mut t, first) = Terminal::guest(f, "Booting\n");
        assert_eq!(first, b"Booting\r\n\r\nweb1 login: ");
        t.input(b"root\r");
        let out = printed(&t.input(b"anything\r"));
        assert_eq!(out, "\r\nroot@web1:~# ");
        // A node's commands are not a guest's.
        let out = printed(&t.input(b"qm list\r"));
        assert!(out.contains("-bash: qm: command not found"), "{out}");
    }
}
