# LLeMbas shell integration for fish, run by `fish -l --init-command 'source <this file>'` after the
# user's configuration. It marks every prompt for the web terminal: OSC 133 A (prompt start),
# B (command start), C (output start), D;<status> (a command finished) and OSC 7 (the folder).
# Written by LLeMbas for one terminal and removed when it closes. The host name is filled in.

set -g __lembas_ran 0

function __lembas_osc7
    printf '\e]7;file://%s%s\a' @LEMBAS_HOST@ (string escape --style=url -- $PWD)
end

# The prompt: A, the user's fish_prompt, B. A theme or a hook that defines fish_prompt afresh is
# wrapped again before the next prompt.
function __lembas_wrap_prompt
    if functions -q fish_prompt; and string match -q -- '*__lembas_user_prompt*' (functions fish_prompt)
        return
    end
    functions -e __lembas_user_prompt
    if functions -q fish_prompt
        functions -c fish_prompt __lembas_user_prompt
    else
        function __lembas_user_prompt
        end
    end
    function fish_prompt
        printf '\e]133;A\a'
        __lembas_user_prompt $argv
        printf '\e]133;B\a'
    end
end

function __lembas_prompt --on-event fish_prompt
    __lembas_osc7
    __lembas_wrap_prompt
end

# fish_preexec comes for a command line that is not empty; fish_postexec after it.
function __lembas_preexec --on-event fish_preexec
    set -g __lembas_ran 1
    printf '\e]133;C\a'
end

function __lembas_postexec --on-event fish_postexec
    set -l s $status
    if test "$__lembas_ran" = 1
        printf '\e]133;D;%s\a' $s
        set -g __lembas_ran 0
    end
end

__lembas_wrap_prompt
