# LLeMbas: the user's ZDOTDIR back for good and nothing of ours left, then the user's .zshrc, then
# the marks for the web terminal: OSC 133 A (prompt start), B (command start), C (output start),
# D;<status> (a command finished) and OSC 7 (the folder). The host name is filled in.
__lembas_user_restore
unset __lembas_zdotdir __lembas_user_zdotdir_set __lembas_user_zdotdir __lembas_user_zdotdir_export
unfunction __lembas_user_restore __lembas_user_save
if [[ -r ${ZDOTDIR:-$HOME}/.zshrc ]]; then source "${ZDOTDIR:-$HOME}/.zshrc"; fi

typeset -gi __lembas_ran=0
__lembas_osc7() {
    emulate -L zsh
    setopt no_multibyte
    local p=$PWD out= c h i
    if [[ $p == *[^A-Za-z0-9/._~-]* ]]; then
        for ((i = 1; i <= ${#p}; i++)); do
            c=$p[i]
            case $c in
                ([A-Za-z0-9/._~-]) out+=$c ;;
                (*) printf -v h '%%%02X' "'$c"; out+=$h ;;
            esac
        done
    else
        out=$p
    fi
    printf '\e]7;file://%s%s\a' @LEMBAS_HOST@ "$out"
}
# First precmd hook: the finished command's status (preexec ran: a command line was read, so an
# empty line ends none), then the folder. $? is kept for the hooks after it.
__lembas_precmd_start() {
    local s=$?
    if ((__lembas_ran)); then
        printf '\e]133;D;%s\a' $s
        __lembas_ran=0
    fi
    __lembas_osc7
    return $s
}
# Last precmd hook, after every hook that may have built PS1 afresh (starship, powerline): A before the
# prompt, B after it. It puts itself last again for the next prompt, after hooks added since.
__lembas_precmd_end() {
    local s=$?
    emulate -L zsh
    local a=$'%{\e]133;A\a%}' b=$'%{\e]133;B\a%}'
    PS1=${PS1#"$a"}
    PS1=$a${PS1%"$b"}$b
    precmd_functions=(__lembas_precmd_start ${precmd_functions:#__lembas_precmd_(start|end)} __lembas_precmd_end)
    return $s
}
__lembas_preexec() {
    __lembas_ran=1
    printf '\e]133;C\a'
}
typeset -ga precmd_functions preexec_functions
precmd_functions=(__lembas_precmd_start ${precmd_functions:#__lembas_precmd_(start|end)} __lembas_precmd_end)
preexec_functions=(${preexec_functions:#__lembas_preexec} __lembas_preexec)
