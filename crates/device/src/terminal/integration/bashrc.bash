# LLeMbas shell integration for bash, run as `bash --rcfile <this file> -i` (an interactive shell that
# is not a login shell, since bash reads --rcfile only then). It reads the login files itself, as
# `bash --login` would, then marks every prompt for the web terminal: OSC 133 A (prompt start),
# B (command start), C (output start), D;<status> (a command finished) and OSC 7 (the folder).
# Written by LLeMbas for one terminal and removed when it closes. The host name is filled in.

# The login files, in bash's order. bash has already read /etc/bash.bashrc (it does for every
# interactive shell), so /etc/profile runs with PS1 unset: it then does not read that file again.
__lembas_ps1=${PS1-}
unset PS1
if [ -r /etc/profile ]; then . /etc/profile; fi
if [ -z "${PS1+set}" ]; then PS1=$__lembas_ps1; fi
unset __lembas_ps1
if [ -r ~/.bash_profile ]; then . ~/.bash_profile
elif [ -r ~/.bash_login ]; then . ~/.bash_login
elif [ -r ~/.profile ]; then . ~/.profile
fi

# Logout, as a login shell has it: ~/.bash_logout (then the system's) when the shell exits, read from
# an EXIT trap placed before any EXIT trap the user's files set; `logout` exits like `exit`.
__lembas_logout() {
    if [ -r ~/.bash_logout ]; then . ~/.bash_logout; fi
    if [ -r /etc/bash.bash_logout ]; then . /etc/bash.bash_logout; fi
}
__lembas_exit_trap() { eval "set -- $(trap -p EXIT)"; printf '%s' "${3-}"; }
__lembas_user_exit=$(__lembas_exit_trap)
trap -- "__lembas_logout${__lembas_user_exit:+
$__lembas_user_exit}" EXIT
unset __lembas_user_exit
unset -f __lembas_exit_trap
logout() { exit "$@"; }

# The marks. The command number (\#) only grows when a command ran, so an empty line ends none.
__lembas_command=
__lembas_osc7() {
    local LC_ALL=C path=$PWD out= c h i
    if [[ $path == *[!A-Za-z0-9/._~-]* ]]; then
        for ((i = 0; i < ${#path}; i++)); do
            c=${path:i:1}
            case $c in
                [A-Za-z0-9/._~-]) out+=$c ;;
                *) printf -v h '%%%02X' "'$c"; out+=$h ;;
            esac
        done
    else
        out=$path
    fi
    printf '\e]7;file://%s%s\a' @LEMBAS_HOST@ "$out"
}
# First in PROMPT_COMMAND: the finished command's status, then the folder. $? and $_ are kept for
# the user's hooks and prompt.
__lembas_prompt_start() {
    local status=$? number='\#'
    __lembas_last_arg=$1
    number=${number@P}
    if [[ -n $__lembas_command && $number != "$__lembas_command" ]]; then
        printf '\e]133;D;%s\a' "$status"
    fi
    __lembas_command=$number
    __lembas_osc7
    return $status
}
# Last in PROMPT_COMMAND, after every hook that may have built PS1 afresh (starship, powerline):
# A before the prompt, B after it, C in PS0 (shown when a command line is read, never for an empty one).
__lembas_prompt_end() {
    local status=$? a='\[\e]133;A\a\]' b='\[\e]133;B\a\]' c='\e]133;C\a'
    PS1=${PS1#"$a"}
    PS1=$a${PS1%"$b"}$b
    case ${PS0-} in *"$c"*) ;; *) PS0=${PS0-}$c ;; esac
    return $status
}
if ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 501)) &&
    [[ $(declare -p PROMPT_COMMAND 2>/dev/null) == "declare -a"* ]]; then
    PROMPT_COMMAND=('__lembas_prompt_start "$_"' "${PROMPT_COMMAND[@]}" '__lembas_prompt_end "$__lembas_last_arg"')
else
    PROMPT_COMMAND='__lembas_prompt_start "$_"'${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND}$'\n''__lembas_prompt_end "$__lembas_last_arg"'
fi
