//! The fuzz target's findings, kept as a table: each is a test row and a bench line.

/// Lines the `bash_judge` fuzz target found to crash the judge or blow brush-parser up, as it
/// found them, with what each mode decides (plan, manual, edit, auto). The judge's tests check the
/// verdicts; `scripts/bench` times them, contained, as the device judges them.
pub const FUZZ_FOUND: &[(&str, &str)] = &[
    // brush-parser unwrapped a redirection's fd number that does not fit an i32.
    (
        "s\u{1}\0\0\0\0\0\0\0lsgi;2222222222222222222222222222222> ",
        "DQQQ",
    ),
    ("ls 99999999999>out", "DQQQ"),
    // Unreadable as a whole, like any line the parser refuses: it asks, even with a sudo in it.
    ("sudo ls 2>x; cat 2147483648<in", "DQQQ"),
    ("cat 2147483647<in", "AAAA"),
    // brush-parser backtracked exponentially on unclosed parentheses (this one: minutes).
    (
        "((((((((((((((((((((((((((((\u{f}\0\0cat \0cat <<EOF\nhe<<EOF>|\nhe",
        "DQQQ",
    ),
    ("((((((((((((((((((((((((((((((ls", "DQQQ"),
    // Six deep is still read; seven is not, of any brackets.
    ("((((((ls))))))", "AAAA"),
    ("(((((((ls)))))))", "DQQQ"),
    ("echo ${a[${b[${c[0]}]}]}", "AAAA"),
    ("echo ${a[${b[${c[${d[0]}]}]}]}", "DQQQ"),
    // A few brackets left open are read (a case pattern's `)` has no opener at all); five are not.
    ("case $x in a) echo '(' '[' ;; esac", "AAAA"),
    ("echo '(' '[' '{' \"(\"", "AAAA"),
    ("echo '(' '[' '{' \"(\" '['", "DQQQ"),
    // 29 s in brush-parser's word parser: `${!H[` left open between closed `${…}`.
    (
        "H[Tok4E}${!H[TMk44,-bfcommandE}$\"}${!H[T0k43,4nW\0(\0\0$wk44,-bfE}$\"}${!H[Tr%l${!H[Tok4E}${!H[TMk44,-bfcommandE}$\"}${!H[T0k43,4nW\0(\0\0$wk44,-bfE}$\"}${!H[T0k44,4nW\0(\0\0$w#2]!<{))rdf}",
        "DQQQ",
    ),
    // More than 20 s in brush-parser's word parser: `${` with `[[` subscripts, unclosed.
    (
        "rrME}\u{10}${I[[T-ektor(wME}\u{10}${I[[Toketop,\0ME}\u{10}${I[[T-ektor(wME}\u{10}${I[[Toketop,\0\0\0\0\0)\0\0\u{10}${IY[TokE}}",
        "DQQQ",
    ),
    // The word parser took a second on unclosed substitutions twelve deep in a here-document.
    (
        "cat <<EOF\npello[ $((#.l.) da[ $((.l$((.l$(datelo[ $(.l$(dat`lo[ $((#['_'.l.) t .$( <|($(da[ $)\nEOF",
        "DQQQ",
    ),
    // brush-parser's tokenizer took seconds on a here-document with an empty delimiter.
    ("grit ches   vm -r -f \"[\"dif<<''''''''''   ''''''  '' ", "DQQQ"),
    ("a<< \"\" b", "DQQQ"),
    // A tag that is only a carriage return or a form feed is empty once brush-parser trims it
    // (more than 2 GB, found inside a backquote).
    ("<<\r\t", "DQQQ"),
    ("cat <<\u{c}\tx", "DQQQ"),
    (
        "gi`t [f(d<<\t\t\r\t\t)t\t<<\t\tMMMM\t\t; )\t\u{b}\tot\u{7f}c `vr",
        "DQQQ",
    ),
    ("cat <<\rEOF\nhi\nEOF", "AAAA"),
    // No tag at all, an operator after `<<`, inside a substitution: more than 2 GB.
    ("$(<< >[ ", "DQQQ"),
    // Two blanks after `<<` inside a substitution: an empty tag again (more than 2 GB).
    ("g l$(,show<<  ho ", "DQQQ"),
    ("echo $(cat <<  EOF\nhi\nEOF\n)", "DQQQ"),
    ("echo $(cat << EOF\nhi\nEOF\n)", "AAAA"),
    (
        "ls 8& 44~& 44444>& 4\u{1e}& 5(,l4\u{1e}& 5(,l$(,<< << 4z& 444>& 1j4 444>&0& 44>[   ",
        "DQQQ",
    ),
    // A here-string and a named delimiter are still read.
    ("cat <<< ''", "AAAA"),
    ("cat <<'EOF'\nhi\nEOF", "AAAA"),
    // A substitution in the body is read; in the delimiter the line is unreadable.
    ("cat <<-EOF\n$(date)\nEOF", "AAAA"),
    ("cat <<E$(x)\nE", "DQQQ"),
    // brush-parser's tokenizer unwrapped a None on this one (a panic caught: unreadable, so it asks).
    (
        "c)\0\0\0IME}${HYM-!at <<EOF|{d[To X_::W\0\0\0IME}${HYM-!at <<EOF|{d[To X_::W-\nEOF",
        "DQQQ",
    ),
    // ...and its tilde words unwrapped a number too large for an i32.
    ("rf ~+66666666666666666666666666666666", "DQQQ"),
];
