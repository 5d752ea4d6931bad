# LLeMbas: the user's .zprofile, read with the user's ZDOTDIR in place (see .zshenv here).
__lembas_user_restore
if [[ -r ${ZDOTDIR:-$HOME}/.zprofile ]]; then source "${ZDOTDIR:-$HOME}/.zprofile"; fi
__lembas_user_save
