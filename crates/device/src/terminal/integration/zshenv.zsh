# LLeMbas shell integration for zsh: ZDOTDIR points at this folder, so zsh reads these wrappers, each
# of which reads the user's own file of the same name (from the user's ZDOTDIR, or HOME) with the
# user's ZDOTDIR in place. The .zshrc wrapper puts the user's ZDOTDIR back for good and removes all of
# ours before the user's .zshrc runs; zsh then reads the user's .zlogin itself.
# Written by LLeMbas for one terminal (the quoted values filled in) and removed when it closes.

__lembas_zdotdir=@LEMBAS_ZDOTDIR@
__lembas_user_zdotdir_set=@LEMBAS_USER_ZDOTDIR_SET@
__lembas_user_zdotdir=@LEMBAS_USER_ZDOTDIR@
__lembas_user_zdotdir_export=$__lembas_user_zdotdir_set

# ZDOTDIR as the user has it (unset, or a value, exported or not).
__lembas_user_restore() {
    unset ZDOTDIR
    if ((__lembas_user_zdotdir_set)); then
        if ((__lembas_user_zdotdir_export)); then
            export ZDOTDIR=$__lembas_user_zdotdir
        else
            typeset -g ZDOTDIR=$__lembas_user_zdotdir
        fi
    fi
}
# Remember it after a user's file ran (their .zshenv may set ZDOTDIR), then point zsh back at us.
__lembas_user_save() {
    if ((${+ZDOTDIR})); then
        __lembas_user_zdotdir_set=1
        __lembas_user_zdotdir=$ZDOTDIR
        if [[ ${(t)ZDOTDIR} == *export* ]]; then __lembas_user_zdotdir_export=1; else __lembas_user_zdotdir_export=0; fi
    else
        __lembas_user_zdotdir_set=0
    fi
    ZDOTDIR=$__lembas_zdotdir
}

__lembas_user_restore
if [[ -r ${ZDOTDIR:-$HOME}/.zshenv ]]; then source "${ZDOTDIR:-$HOME}/.zshenv"; fi
__lembas_user_save
