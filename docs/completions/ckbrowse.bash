#!/bin/bash

__ckbrowse_cursor_index_in_current_word() {
    local remaining="${COMP_LINE}"

    local word
    for word in "${COMP_WORDS[@]::COMP_CWORD}"; do
        remaining="${remaining##*([[:space:]])"${word}"*([[:space:]])}"
    done

    local -ir index="$((COMP_POINT - ${#COMP_LINE} + ${#remaining}))"
    if [[ "${index}" -le 0 ]]; then
        printf 0
    else
        printf %s "${index}"
    fi
}

# positional arguments:
#
# - 1: the current (sub)command's count of positional arguments
#
# required variables:
#
# - repeating_flags: the repeating flags that the current (sub)command can accept
# - non_repeating_flags: the non-repeating flags that the current (sub)command can accept
# - repeating_options: the repeating options that the current (sub)command can accept
# - non_repeating_options: the non-repeating options that the current (sub)command can accept
# - positional_number: value ignored
# - unparsed_words: unparsed words from the current command line
#
# modified variables:
#
# - non_repeating_flags: remove flags for this (sub)command that are already on the command line
# - non_repeating_options: remove options for this (sub)command that are already on the command line
# - positional_number: set to the current positional number
# - unparsed_words: remove all flags, options, and option values for this (sub)command
__ckbrowse_offer_flags_options() {
    local -ir positional_count="${1}"
    positional_number=0

    local was_flag_option_terminator_seen=false
    local is_parsing_option_value=false

    local -ar unparsed_word_indices=("${!unparsed_words[@]}")
    local -i word_index
    for word_index in "${unparsed_word_indices[@]}"; do
        if "${is_parsing_option_value}"; then
            # This word is an option value:
            # Reset marker for next word iff not currently the last word
            [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]] && is_parsing_option_value=false
            unset "unparsed_words[${word_index}]"
            # Do not process this word as a flag or an option
            continue
        fi

        local word="${unparsed_words["${word_index}"]}"
        if ! "${was_flag_option_terminator_seen}"; then
            case "${word}" in
            --)
                unset "unparsed_words[${word_index}]"
                # by itself -- is a flag/option terminator, but if it is the last word, it is the start of a completion
                if [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]]; then
                    was_flag_option_terminator_seen=true
                fi
                continue
                ;;
            -*)
                # ${word} is a flag or an option
                # If ${word} is an option, mark that the next word to be parsed is an option value
                local option
                for option in "${repeating_options[@]}" "${non_repeating_options[@]}"; do
                    [[ "${word}" = "${option}" ]] && is_parsing_option_value=true && break
                done

                # Remove ${word} from ${non_repeating_flags} or ${non_repeating_options} so it isn't offered again
                local not_found=true
                local -i index
                for index in "${!non_repeating_flags[@]}"; do
                    if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                        unset "non_repeating_flags[${index}]"
                        non_repeating_flags=("${non_repeating_flags[@]}")
                        not_found=false
                        break
                    fi
                done
                if "${not_found}"; then
                    for index in "${!non_repeating_flags[@]}"; do
                        if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                            unset "non_repeating_flags[${index}]"
                            non_repeating_flags=("${non_repeating_flags[@]}")
                            break
                        fi
                    done
                fi
                unset "unparsed_words[${word_index}]"
                continue
                ;;
            esac
        fi

        # ${word} is neither a flag, nor an option, nor an option value
        if [[ "${positional_number}" -lt "${positional_count}" || "${positional_count}" -lt 0 ]]; then
            # ${word} is a positional
            ((positional_number++))
            unset "unparsed_words[${word_index}]"
        else
            if [[ -z "${word}" ]]; then
                # Could be completing a flag, option, or subcommand
                positional_number=-1
            else
                # ${word} is a subcommand or invalid, so stop processing this (sub)command
                positional_number=-2
            fi
            break
        fi
    done

    unparsed_words=("${unparsed_words[@]}")

    if\
        ! "${was_flag_option_terminator_seen}"\
        && ! "${is_parsing_option_value}"\
        && [[ ("${cur}" = -* && "${positional_number}" -ge 0) || "${positional_number}" -eq -1 ]]
    then
        COMPREPLY+=($(compgen -W "${repeating_flags[*]} ${non_repeating_flags[*]} ${repeating_options[*]} ${non_repeating_options[*]}" -- "${cur}"))
    fi
}

__ckbrowse_add_completions() {
    local completion
    while IFS='' read -r completion; do
        COMPREPLY+=("${completion}")
    done < <(IFS=$'\n' compgen "${@}" -- "${cur}")
}

__ckbrowse_custom_complete() {
    if [[ -n "${cur}" || -z ${COMP_WORDS[${COMP_CWORD}]} || "${COMP_LINE:${COMP_POINT}:1}" != ' ' ]]; then
        local -ar words=("${COMP_WORDS[@]}")
    else
        local -ar words=("${COMP_WORDS[@]::${COMP_CWORD}}" '' "${COMP_WORDS[@]:${COMP_CWORD}}")
    fi

    "${COMP_WORDS[0]}" "${@}" "${words[@]}"
}

_ckbrowse() {
    local state
    state="$(shopt -p;shopt -po)"
    trap "${state//$'\n'/;}" RETURN
    shopt -s extglob
    set +o history +o posix

    local -xr SAP_SHELL=bash
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(IFS='.';printf %s "${BASH_VERSINFO[*]}")"
    local -r SAP_SHELL_VERSION

    local -r cur="${2}"
    local -r prev="${3}"

    local -i positional_number
    local -a unparsed_words=("${COMP_WORDS[@]:1:${COMP_CWORD}}")

    local -a repeating_flags=()
    local -a non_repeating_flags=(--version -h --help)
    local -a repeating_options=()
    local -a non_repeating_options=()
    __ckbrowse_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    browse|zones|changes|query|get|subscriptions|apply|schema|serve|bench|help)
        # Offer subcommand argument completions
        "_ckbrowse_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'browse zones changes query get subscriptions apply schema serve bench help' -- "${cur}"))
        ;;
    esac
}

_ckbrowse_browse() {
    repeating_flags=()
    non_repeating_flags=(--read-only --version -h --help)
    repeating_options=()
    non_repeating_options=(--profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user)
    __ckbrowse_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    esac
}

_ckbrowse_zones() {
    repeating_flags=()
    non_repeating_flags=(--read-only --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --output)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--output')
        __ckbrowse_add_completions -W 'json'$'\n''table'
        return
        ;;
    esac
}

_ckbrowse_changes() {
    repeating_flags=()
    non_repeating_flags=(--all --read-only --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--since --limit --profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --output)
    __ckbrowse_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--since')
        return
        ;;
    '--limit')
        return
        ;;
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--output')
        __ckbrowse_add_completions -W 'json'$'\n''table'
        return
        ;;
    esac
}

_ckbrowse_query() {
    repeating_flags=()
    non_repeating_flags=(--all --read-only --json --version -h --help)
    repeating_options=(--filter --sort)
    non_repeating_options=(--zone --limit --continue --profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --output)
    __ckbrowse_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--filter')
        return
        ;;
    '--sort')
        return
        ;;
    '--zone')
        return
        ;;
    '--limit')
        return
        ;;
    '--continue')
        return
        ;;
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--output')
        __ckbrowse_add_completions -W 'json'$'\n''table'
        return
        ;;
    esac
}

_ckbrowse_get() {
    repeating_flags=()
    non_repeating_flags=(--force --read-only --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--zone --asset --index --to --profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --output)
    __ckbrowse_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--zone')
        return
        ;;
    '--asset')
        return
        ;;
    '--index')
        return
        ;;
    '--to')
        return
        ;;
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--output')
        __ckbrowse_add_completions -W 'json'$'\n''table'
        return
        ;;
    esac
}

_ckbrowse_subscriptions() {
    repeating_flags=()
    non_repeating_flags=(--dry-run --update --read-only --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --output)
    __ckbrowse_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--output')
        __ckbrowse_add_completions -W 'json'$'\n''table'
        return
        ;;
    esac
}

_ckbrowse_apply() {
    repeating_flags=()
    non_repeating_flags=(--dry-run --non-atomic --read-only --version -h --help)
    repeating_options=()
    non_repeating_options=(--profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user)
    __ckbrowse_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    esac
}

_ckbrowse_schema() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __ckbrowse_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    export|import|validate|deploy|reset)
        # Offer subcommand argument completions
        "_ckbrowse_schema_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'export import validate deploy reset' -- "${cur}"))
        ;;
    esac
}

_ckbrowse_schema_export() {
    repeating_flags=()
    non_repeating_flags=(--read-only --version -h --help)
    repeating_options=()
    non_repeating_options=(--profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --data)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--data')
        return
        ;;
    esac
}

_ckbrowse_schema_import() {
    repeating_flags=()
    non_repeating_flags=(--read-only --version -h --help)
    repeating_options=()
    non_repeating_options=(--profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --data)
    __ckbrowse_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--data')
        return
        ;;
    esac
}

_ckbrowse_schema_validate() {
    repeating_flags=()
    non_repeating_flags=(--read-only --version -h --help)
    repeating_options=()
    non_repeating_options=(--profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --data)
    __ckbrowse_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--data')
        return
        ;;
    esac
}

_ckbrowse_schema_deploy() {
    repeating_flags=()
    non_repeating_flags=(--read-only --version -h --help)
    repeating_options=()
    non_repeating_options=(--profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --data)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--data')
        return
        ;;
    esac
}

_ckbrowse_schema_reset() {
    repeating_flags=()
    non_repeating_flags=(--read-only --version -h --help)
    repeating_options=()
    non_repeating_options=(--confirm --profile --server --container --environment --database --api-token --web-auth-token --key-id --key-file --demo-user --data)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--confirm')
        return
        ;;
    '--profile')
        return
        ;;
    '--server')
        return
        ;;
    '--container')
        return
        ;;
    '--environment')
        __ckbrowse_add_completions -W 'development'$'\n''production'
        return
        ;;
    '--database')
        __ckbrowse_add_completions -W 'public'$'\n''private'$'\n''shared'
        return
        ;;
    '--api-token')
        return
        ;;
    '--web-auth-token')
        return
        ;;
    '--key-id')
        return
        ;;
    '--key-file')
        return
        ;;
    '--demo-user')
        return
        ;;
    '--data')
        return
        ;;
    esac
}

_ckbrowse_serve() {
    repeating_flags=()
    non_repeating_flags=(--in-memory --import-credentials --export-credentials --single-use-tokens --no-index-rules --version -h --help)
    repeating_options=(--api-token --user --server-key --role --allow-origin --allow-host)
    non_repeating_options=(--data --config --import --export-on-exit --host --port --seed --origin-exclusion --update-match --hold-seconds --max-queued --payload-limit --answer-cache-mb --max-asset-mb --schema --container --web-token-lifetime --endpoints --header-timeout --idle-timeout --write-timeout --max-connections)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--data')
        return
        ;;
    '--config')
        return
        ;;
    '--import')
        return
        ;;
    '--export-on-exit')
        return
        ;;
    '--host')
        return
        ;;
    '--port')
        return
        ;;
    '--api-token')
        return
        ;;
    '--user')
        return
        ;;
    '--server-key')
        return
        ;;
    '--seed')
        return
        ;;
    '--origin-exclusion')
        return
        ;;
    '--update-match')
        return
        ;;
    '--hold-seconds')
        return
        ;;
    '--max-queued')
        return
        ;;
    '--payload-limit')
        return
        ;;
    '--answer-cache-mb')
        return
        ;;
    '--max-asset-mb')
        return
        ;;
    '--schema')
        return
        ;;
    '--container')
        return
        ;;
    '--role')
        return
        ;;
    '--allow-origin')
        return
        ;;
    '--allow-host')
        return
        ;;
    '--web-token-lifetime')
        return
        ;;
    '--endpoints')
        return
        ;;
    '--header-timeout')
        return
        ;;
    '--idle-timeout')
        return
        ;;
    '--write-timeout')
        return
        ;;
    '--max-connections')
        return
        ;;
    esac
}

_ckbrowse_bench() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __ckbrowse_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    decode|serve|terminal|memory|reopen|keypress|network|bulk)
        # Offer subcommand argument completions
        "_ckbrowse_bench_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'decode serve terminal memory reopen keypress network bulk' -- "${cur}"))
        ;;
    esac
}

_ckbrowse_bench_decode() {
    repeating_flags=()
    non_repeating_flags=(--dump --version -h --help)
    repeating_options=()
    non_repeating_options=(--records --runs --iterations --python)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--records')
        return
        ;;
    '--runs')
        return
        ;;
    '--iterations')
        return
        ;;
    '--python')
        return
        ;;
    esac
}

_ckbrowse_bench_serve() {
    repeating_flags=()
    non_repeating_flags=(--scaling-only --version -h --help)
    repeating_options=()
    non_repeating_options=(--records --runs --clients --scaling)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--records')
        return
        ;;
    '--runs')
        return
        ;;
    '--clients')
        return
        ;;
    '--scaling')
        return
        ;;
    esac
}

_ckbrowse_bench_terminal() {
    repeating_flags=()
    non_repeating_flags=(--show-bytes --version -h --help)
    repeating_options=()
    non_repeating_options=(--term --width --height)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--term')
        return
        ;;
    '--width')
        return
        ;;
    '--height')
        return
        ;;
    esac
}

_ckbrowse_bench_memory() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--records)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--records')
        return
        ;;
    esac
}

_ckbrowse_bench_reopen() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--records --changed-percent)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--records')
        return
        ;;
    '--changed-percent')
        return
        ;;
    esac
}

_ckbrowse_bench_keypress() {
    repeating_flags=()
    non_repeating_flags=(--prepare-only --version -h --help)
    repeating_options=()
    non_repeating_options=(--records --presses --cache-directory)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--records')
        return
        ;;
    '--presses')
        return
        ;;
    '--cache-directory')
        return
        ;;
    esac
}

_ckbrowse_bench_network() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--delay-ms --records --rate)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--delay-ms')
        return
        ;;
    '--records')
        return
        ;;
    '--rate')
        return
        ;;
    esac
}

_ckbrowse_bench_bulk() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--deletions --exported)
    __ckbrowse_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--deletions')
        return
        ;;
    '--exported')
        return
        ;;
    esac
}

_ckbrowse_help() {
    repeating_flags=()
    non_repeating_flags=(--version)
    repeating_options=()
    non_repeating_options=()
    __ckbrowse_offer_flags_options -1
}

complete -o filenames -F _ckbrowse ckbrowse
