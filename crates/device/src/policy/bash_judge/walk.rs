//! The parse tree flattened into what the judge looks at: each simple command with its words as bash
//! would pass them (quotes and escapes removed, `$'…'` decoded, `~` and `$HOME` made the home
//! folder), the files its redirections write and read, and the nested scripts (`$(…)`, backticks,
//! process substitutions, and those bash runs when it evaluates a subscript: `subscripts`) to judge
//! on their own.

use brush_parser::ParserOptions;
use brush_parser::ast::{self, Command, CompoundCommand, CompoundList, IoRedirect};
use brush_parser::word::{self, Parameter, ParameterExpr, TildeExpr, WordPiece, WordPieceWithSource};

use super::vars::{self, UNKNOWN, Value, Vars};
use super::{ansi_c, braces, subscripts};

#[derive(Debug, Clone, Default)]
pub struct Arg {
    pub text: String,
    /// Part of the word is only known at run time (a variable, a substitution).
    pub dynamic: bool,
}

impl Arg {
    pub fn literal(text: &str) -> Arg {
        Arg {
            text: text.to_string(),
            dynamic: false,
        }
    }
}

#[derive(Debug)]
pub enum Part {
    Command {
        words: Vec<Arg>,
        writes: Vec<Arg>,
        /// Files its input redirections read (`< file`, `0< file`, `<> file`).
        reads: Vec<Arg>,
        assigns: Vec<String>,
    },
    /// A nested script, judged like a line of its own.
    Script(String),
    /// Something the judge cannot see through; the sentence says what.
    Opaque(String),
    ForkBomb(String),
}

#[derive(Default)]
pub struct Walk {
    pub parts: Vec<Part>,
    /// Functions the line defines: calling one runs a body that is judged where it is defined.
    pub functions: Vec<String>,
    /// What the line gives its variables, so far as the walk has read (`vars`).
    pub vars: Vars,
    home: String,
    defining: Vec<String>,
}

impl Walk {
    /// `vars`: what the calling line gave its variables (a nested script's caller).
    pub fn of(program: &ast::Program, home: &str, vars: &Vars) -> Walk {
        let mut walk = Walk {
            home: home.to_string(),
            vars: vars.clone(),
            ..Walk::default()
        };
        for list in &program.complete_commands {
            walk.list(list, false);
        }
        walk
    }

    /// `spread`: inside a pipeline or in the background, where a self-call multiplies processes.
    fn list(&mut self, list: &CompoundList, spread: bool) {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            let background = spread || matches!(separator, ast::SeparatorOperator::Async);
            self.pipeline(&and_or.first, background);
            for next in &and_or.additional {
                let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
                self.pipeline(p, background);
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, background: bool) {
        let spread = background || pipeline.seq.len() > 1;
        for command in &pipeline.seq {
            self.command(command, spread);
        }
    }

    fn command(&mut self, command: &Command, spread: bool) {
        match command {
            Command::Simple(simple) => self.simple(simple, spread),
            Command::Compound(compound, redirects) => {
                self.compound(compound, spread);
                self.redirect_list(redirects.as_ref());
            }
            Command::Function(definition) => {
                let name = self.word(&definition.fname.value).text;
                self.functions.push(name.clone());
                self.defining.push(name);
                self.compound(&definition.body.0, false);
                self.redirect_list(definition.body.1.as_ref());
                self.defining.pop();
            }
            Command::ExtendedTest(test, redirects) => {
                self.test_words(&test.expr);
                self.redirect_list(redirects.as_ref());
            }
        }
    }

    fn compound(&mut self, compound: &CompoundCommand, spread: bool) {
        match compound {
            CompoundCommand::BraceGroup(group) => self.list(&group.list, spread),
            CompoundCommand::Subshell(subshell) => self.list(&subshell.list, spread),
            // The list's words are read where the loop is (`for f in ~/.ssh/*`): the variable
            // stands for one of them.
            CompoundCommand::ForClause(clause) => {
                let values: Vec<Arg> = clause
                    .values
                    .iter()
                    .flatten()
                    .flat_map(|value| self.words(&value.value))
                    .collect();
                let only = match values.as_slice() {
                    [one] if !one.dynamic && !globbed(&one.text) => Some(one.text.as_str()),
                    _ => None,
                };
                self.vars.loop_over(&clause.variable_name, only);
                let reads: Vec<Arg> = values.into_iter().filter(|v| !v.text.contains("://")).collect();
                if !reads.is_empty() {
                    self.parts.push(Part::Command {
                        words: Vec::new(),
                        writes: Vec::new(),
                        reads,
                        assigns: Vec::new(),
                    });
                }
                self.list(&clause.body.list, spread);
            }
            CompoundCommand::ArithmeticForClause(clause) => {
                let exprs = [&clause.initializer, &clause.condition, &clause.updater];
                for expr in exprs.into_iter().flatten() {
                    self.arithmetic(&expr.value);
                }
                self.list(&clause.body.list, spread);
            }
            CompoundCommand::CaseClause(case) => {
                self.word(&case.value.value);
                for item in &case.cases {
                    if let Some(list) = &item.cmd {
                        self.list(list, spread);
                    }
                }
            }
            CompoundCommand::IfClause(clause) => {
                self.list(&clause.condition, spread);
                self.list(&clause.then, spread);
                for other in clause.elses.iter().flatten() {
                    if let Some(condition) = &other.condition {
                        self.list(condition, spread);
                    }
                    self.list(&other.body, spread);
                }
            }
            CompoundCommand::WhileClause(clause) | CompoundCommand::UntilClause(clause) => {
                self.list(&clause.0, spread);
                self.list(&clause.1.list, spread);
            }
            CompoundCommand::Coprocess(coprocess) => self.command(&coprocess.body, true),
            CompoundCommand::Arithmetic(arithmetic) => self.arithmetic(&arithmetic.expr.value),
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, spread: bool) {
        let (mut words, mut assigns) = (Vec::new(), Vec::new());
        let mut files = Files::default();
        let prefix = simple.prefix.iter().flat_map(|p| &p.0);
        let suffix = simple.suffix.iter().flat_map(|s| &s.0);
        for item in prefix {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, _) => {
                    assigns.push(self.assignment(assignment));
                }
                other => self.item(other, &mut words, &mut files),
            }
        }
        if let Some(name) = &simple.word_or_name {
            words.extend(self.words(&name.value));
        }
        for item in suffix {
            self.item(item, &mut words, &mut files);
        }
        if let Some(name) = words
            .first()
            .filter(|n| spread && self.defining.contains(&n.text))
        {
            self.parts.push(Part::ForkBomb(name.text.clone()));
        }
        self.parts.push(Part::Command {
            words,
            writes: files.writes,
            reads: files.reads,
            assigns,
        });
    }

    fn item(&mut self, item: &ast::CommandPrefixOrSuffixItem, words: &mut Vec<Arg>, files: &mut Files) {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => self.redirect(redirect, files),
            ast::CommandPrefixOrSuffixItem::Word(w) => words.extend(self.words(&w.value)),
            // `export X=$(…)`: an argument, with its value's substitutions judged.
            ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                let arg = self.word(&w.value);
                if let Some((name, value)) = arg.text.split_once('=') {
                    self.vars.assign(name, Some(value).filter(|_| !arg.dynamic));
                }
                words.push(arg);
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                self.list(&subshell.list, false);
                words.push(Arg {
                    text: UNKNOWN.to_string(),
                    dynamic: true,
                });
            }
        }
    }

    fn assignment(&mut self, assignment: &ast::Assignment) -> String {
        let value = match &assignment.value {
            ast::AssignmentValue::Scalar(w) => Some(self.word(&w.value)),
            ast::AssignmentValue::Array(items) => {
                for (key, value) in items {
                    if let Some(key) = key {
                        self.word(&key.value);
                    }
                    self.word(&value.value);
                }
                None
            }
        };
        let name = match &assignment.name {
            ast::AssignmentName::VariableName(name) | ast::AssignmentName::ArrayElementName(name, _) => {
                name.clone()
            }
        };
        let whole = matches!(assignment.name, ast::AssignmentName::VariableName(_)) && !assignment.append;
        let known = value.filter(|v| !v.dynamic && whole).map(|v| v.text);
        self.vars.assign(&name, known.as_deref());
        name
    }

    /// A compound command's redirections (`while …; done < file`), as a part of their own.
    fn redirect_list(&mut self, redirects: Option<&ast::RedirectList>) {
        let mut files = Files::default();
        for redirect in redirects.iter().flat_map(|r| &r.0) {
            self.redirect(redirect, &mut files);
        }
        if !files.writes.is_empty() || !files.reads.is_empty() {
            self.parts.push(Part::Command {
                words: Vec::new(),
                writes: files.writes,
                reads: files.reads,
                assigns: Vec::new(),
            });
        }
    }

    fn redirect(&mut self, redirect: &IoRedirect, files: &mut Files) {
        use ast::{IoFileRedirectKind as Kind, IoFileRedirectTarget as Target};
        match redirect {
            IoRedirect::File(_, kind, target) => {
                let writing = matches!(
                    kind,
                    Kind::Write | Kind::Append | Kind::Clobber | Kind::ReadAndWrite | Kind::DuplicateOutput
                );
                let reading = matches!(kind, Kind::Read | Kind::ReadAndWrite | Kind::DuplicateInput);
                match target {
                    Target::Filename(w) => {
                        let arg = self.word(&w.value);
                        if reading {
                            files.reads.push(arg.clone());
                        }
                        if writing {
                            files.writes.push(arg);
                        }
                    }
                    // `>&2`, `2>&1`, `>&-`: another descriptor, not a file.
                    Target::Fd(_) => {}
                    Target::Duplicate(w) => {
                        let arg = self.word(&w.value);
                        let descriptor = arg.text.chars().all(|c| c.is_ascii_digit() || c == '-');
                        if reading && !descriptor {
                            files.reads.push(arg.clone());
                        }
                        if writing && !descriptor {
                            files.writes.push(arg);
                        }
                    }
                    Target::ProcessSubstitution(_, subshell) => self.list(&subshell.list, false),
                }
            }
            IoRedirect::OutputAndError(w, _) => {
                let arg = self.word(&w.value);
                files.writes.push(arg);
            }
            IoRedirect::HereString(_, w) => {
                self.word(&w.value);
            }
            IoRedirect::HereDocument(_, doc) if doc.requires_expansion => {
                match word::parse_heredoc(&doc.doc.value, &ParserOptions::default()) {
                    Ok(pieces) => {
                        let mut arg = Arg::default();
                        self.pieces(&pieces, &mut arg, &doc.doc.value);
                    }
                    Err(_) => self
                        .parts
                        .push(Part::Opaque("a here-document that cannot be read".into())),
                }
            }
            IoRedirect::HereDocument(..) => {}
        }
    }

    fn test_words(&mut self, expr: &ast::ExtendedTestExpr) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.test_words(a);
                self.test_words(b);
            }
            E::Not(a) | E::Parenthesized(a) => self.test_words(a),
            // `[[ -v $name ]]`: a name only known when it runs may carry a subscript that runs.
            E::UnaryTest(op, w) => {
                let arg = self.word(&w.value);
                let names_variable = matches!(
                    op,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                );
                if names_variable && arg.dynamic {
                    self.parts.push(Part::Opaque(
                        "a variable's name only known when it runs (its subscript would run)".into(),
                    ));
                }
            }
            E::BinaryTest(_, a, b) => {
                self.word(&a.value);
                self.word(&b.value);
            }
        }
    }

    fn arithmetic(&mut self, text: &str) {
        if text.contains("$(") || text.contains('`') {
            self.parts
                .push(Part::Opaque("a command inside arithmetic".into()));
        }
    }

    /// The words one word of a command makes once its braces are expanded (`{sudo,x}`).
    fn words(&mut self, raw: &str) -> Vec<Arg> {
        if !raw.contains('{') {
            return vec![self.word(raw)];
        }
        match braces::expand(raw) {
            Some(all) => all.iter().map(|w| self.word(w)).collect(),
            None => {
                self.parts
                    .push(Part::Opaque("a brace expansion too large to read".into()));
                vec![Arg {
                    text: UNKNOWN.to_string(),
                    dynamic: true,
                }]
            }
        }
    }

    /// One word as bash would pass it; its substitutions become parts of their own, and so do
    /// those bash would run if it evaluates the word as a subscript.
    pub fn word(&mut self, raw: &str) -> Arg {
        let mut arg = Arg::default();
        match word::parse(raw, &ParserOptions::default()) {
            Ok(pieces) => {
                self.pieces(&pieces, &mut arg, raw);
                vars::settle(&mut arg.text);
                if subscripts::evaluated(&arg.text) {
                    self.hidden(&arg.text);
                }
            }
            Err(_) => {
                self.parts
                    .push(Part::Opaque(format!("the word {raw:?} cannot be read")));
                arg = Arg {
                    text: UNKNOWN.to_string(),
                    dynamic: true,
                };
            }
        }
        arg
    }

    /// The substitutions in text bash evaluates again, each a part of its own.
    fn hidden(&mut self, text: &str) {
        let hidden = subscripts::hidden(text);
        self.parts.extend(hidden.scripts.into_iter().map(Part::Script));
        if hidden.unreadable {
            self.parts.push(Part::Opaque(
                "a substitution inside a subscript that cannot be read".into(),
            ));
        }
    }

    /// `raw`: the text the pieces were parsed from, for the pieces brush-parser keeps as text.
    fn pieces(&mut self, pieces: &[WordPieceWithSource], arg: &mut Arg, raw: &str) {
        for piece in pieces {
            match &piece.piece {
                WordPiece::Text(s) | WordPiece::SingleQuotedText(s) => arg.text.push_str(s),
                WordPiece::AnsiCQuotedText(s) => arg.text.push_str(&ansi_c::decode(s)),
                WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, arg, raw)
                }
                // `s\udo` is `sudo`; a backslash before a newline continues the line.
                WordPiece::EscapeSequence(s) => {
                    let escaped = s.strip_prefix('\\').unwrap_or(s);
                    if escaped != "\n" {
                        arg.text.push_str(escaped);
                    }
                }
                WordPiece::TildeExpansion(TildeExpr::Home) => arg.text.push_str(&self.home),
                WordPiece::ParameterExpansion(ParameterExpr::Parameter {
                    parameter: Parameter::Named(name),
                    indirect: false,
                }) if name == "HOME" => arg.text.push_str(&self.home),
                // A variable the line gave a value: that value; set otherwise by the line: marked.
                WordPiece::ParameterExpansion(ParameterExpr::Parameter {
                    parameter: Parameter::Named(name),
                    indirect: false,
                }) if self.vars.get(name).is_some() => match self.vars.get(name) {
                    Some(Value::Known(value)) => arg.text.push_str(value),
                    Some(Value::OneOfList) => {
                        arg.text.push(vars::ONE_OF_LIST);
                        arg.dynamic = true;
                    }
                    _ => {
                        arg.text.push(vars::SET_BY_LINE);
                        arg.dynamic = true;
                    }
                },
                WordPiece::CommandSubstitution(script) | WordPiece::BackquotedCommandSubstitution(script) => {
                    self.parts.push(Part::Script(script.clone()));
                    unknown(arg);
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.arithmetic(&expr.value);
                    unknown(arg);
                }
                // `${x:-$(…)}`, `${a[$(…)]}`: brush-parser keeps what is inside the braces as text;
                // a substitution there runs all the same.
                WordPiece::ParameterExpansion(_) => {
                    let source = raw.get(piece.start_index..piece.end_index).unwrap_or(raw);
                    let inside = subscripts::inside_braces(source);
                    if subscripts::runs_something(inside) {
                        self.hidden(inside);
                    }
                    // `${a%x}`, `${#a}`, `${a:-…}` of a variable the line set: built from it.
                    if self.vars.mentioned_in(inside) {
                        arg.text.push(vars::SET_BY_LINE);
                        arg.dynamic = true;
                    } else {
                        unknown(arg);
                    }
                }
                WordPiece::TildeExpansion(_) => unknown(arg),
            }
        }
    }
}

/// The files a command's redirections write and read.
#[derive(Default)]
struct Files {
    writes: Vec<Arg>,
    reads: Vec<Arg>,
}

/// A word bash would expand as a glob.
fn globbed(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

fn unknown(arg: &mut Arg) {
    arg.text.push(UNKNOWN);
    arg.dynamic = true;
}

/// The command's name as bash finds it: `/usr/bin/sudo` is `sudo`; and in lower case, because a
/// case-insensitive file system (macOS, Windows) finds `SUDO` as `sudo`.
pub fn name_of(word: &Arg) -> String {
    word.text.rsplit('/').next().unwrap_or(&word.text).to_lowercase()
}
