#compdef ckbrowse

__ckbrowse_complete() {
    local -ar non_empty_completions=("${@:#(|:*)}")
    local -ar empty_completions=("${(M)@:#(|:*)}")
    _describe -V '' non_empty_completions -- empty_completions -P $'\'\''
}

__ckbrowse_custom_complete() {
    local -a completions
    completions=("${(@f)"$("${command_name}" "${@}" "${command_line[@]}")"}")
    if [[ "${#completions[@]}" -gt 1 ]]; then
        __ckbrowse_complete "${completions[@]:0:-1}"
    fi
}

__ckbrowse_cursor_index_in_current_word() {
    if [[ -z "${QIPREFIX}${IPREFIX}${PREFIX}" ]]; then
        printf 0
    else
        printf %s "${#${(z)LBUFFER}[-1]}"
    fi
}

_ckbrowse() {
    emulate -RL zsh -G
    setopt extendedglob nullglob numericglobsort
    unsetopt aliases banghist

    local -xr SAP_SHELL=zsh
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(builtin emulate zsh -c 'printf %s "${ZSH_VERSION}"')"
    local -r SAP_SHELL_VERSION

    local context state state_descr line
    local -A opt_args

    local -r command_name="${words[1]}"
    local -ar command_line=("${words[@]}")
    local -ir current_word_index="$((CURRENT - 1))"

    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'browse:Browse a CloudKit container in the terminal (the default command).'
            'zones:List the zones of a database.'
            'changes:Read a zone'\''s change feed (records/changes).'
            'query:Query records of a type (records/query).'
            'get:Look records up by name (records/lookup).'
            'subscriptions:List subscriptions, show one, create them from a file, or delete them.'
            'apply:Send a records/modify batch file, atomic by default, and print per-record results as JSON.'
            'schema:Export, import, validate, deploy or reset a schema in the CloudKit Schema Language (.ckdb, as cktool uses).'
            'serve:Run a local CloudKit Web Services server backed by SQLite.'
            'bench:Run a benchmark and print its figures (build with -c release for real numbers).'
            'help:Show subcommand help information.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        browse|zones|changes|query|get|subscriptions|apply|schema|serve|bench|help)
            "_ckbrowse_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_ckbrowse_browse() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar arg_specs=(
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_zones() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar ___output=('json' 'table')
    local -ar arg_specs=(
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--output[json (one object per line) or table. Default\: table on a terminal, json otherwise.]:output:{__ckbrowse_complete "${___output[@]}"}'
        '--json[Print one JSON document instead of one object per line\: an array of the objects (changes\: an object with its records, syncToken and moreComing).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_changes() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar ___output=('json' 'table')
    local -ar arg_specs=(
        ':zone:'
        '--since[Resume after this sync token (from an earlier run'\''s last line).]:since:'
        '--all[Follow the feed to its end (every page).]'
        '--limit[Records per page (1-200).]:limit:'
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--output[json (one object per line) or table. Default\: table on a terminal, json otherwise.]:output:{__ckbrowse_complete "${___output[@]}"}'
        '--json[Print one JSON document instead of one object per line\: an array of the objects (changes\: an object with its records, syncToken and moreComing).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_query() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar ___output=('json' 'table')
    local -ar arg_specs=(
        ':type:'
        '*--filter[A filter (repeatable).]:FIELD OP VALUE:'
        '*--sort[Sort by a field, ascending (or \:desc) (repeatable).]:FIELD\[\:desc\]:'
        '--zone[The zone (default\: the default zone).]:zone:'
        '--limit[Records per page (1-200).]:limit:'
        '--all[Follow continuation markers to the last page.]'
        '--continue[Read on after a page that ended with this continuationMarker.]:marker:'
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--output[json (one object per line) or table. Default\: table on a terminal, json otherwise.]:output:{__ckbrowse_complete "${___output[@]}"}'
        '--json[Print one JSON document instead of one object per line\: an array of the objects (changes\: an object with its records, syncToken and moreComing).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_get() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar ___output=('json' 'table')
    local -ar arg_specs=(
        '*:names:'
        '--zone[The zone (default\: the default zone).]:zone:'
        '--asset[Write this ASSETID field'\''s file instead of printing the record (one record name; needs --to).]:field:'
        '--index[With --asset\: the element of an ASSETID_LIST field (0 first).]:n:'
        '--to[With --asset\: the file to write (- for standard output).]:file:'
        '--force[With --asset\: write over --to FILE when it exists (by default an existing file is left alone).]'
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--output[json (one object per line) or table. Default\: table on a terminal, json otherwise.]:output:{__ckbrowse_complete "${___output[@]}"}'
        '--json[Print one JSON document instead of one object per line\: an array of the objects (changes\: an object with its records, syncToken and moreComing).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_subscriptions() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar ___output=('json' 'table')
    local -ar arg_specs=(
        '*:words:'
        '--dry-run[With create\: print the request that would be sent and send nothing.]'
        '--update[With create\: send updates of existing subscriptions instead of creates.]'
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--output[json (one object per line) or table. Default\: table on a terminal, json otherwise.]:output:{__ckbrowse_complete "${___output[@]}"}'
        '--json[Print one JSON document instead of one object per line\: an array of the objects (changes\: an object with its records, syncToken and moreComing).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_apply() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar arg_specs=(
        ':file:'
        '--dry-run[Print the request that would be sent and send nothing.]'
        '--non-atomic[Apply the operations non-atomically (each succeeds or fails on its own).]'
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_schema() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'export:Print a container'\''s schema (development by default) as a .ckdb file.'
            'import:Replace development'\''s schema with a .ckdb file (as cktool import-schema).'
            'validate:Check a .ckdb file: its syntax and rules, and (with --server or --data) what production would refuse.'
            'deploy:Promote development'\''s schema to production (the Console'\''s Deploy Schema Changes).'
            'reset:Return development'\''s schema to production'\''s and delete all development data.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        export|import|validate|deploy|reset)
            "_ckbrowse_schema_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_ckbrowse_schema_export() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar arg_specs=(
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--data[A data directory of `ckbrowse serve`, opened directly instead of through a server.]:data:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_schema_import() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar arg_specs=(
        ':file:'
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--data[A data directory of `ckbrowse serve`, opened directly instead of through a server.]:data:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_schema_validate() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar arg_specs=(
        ':file:'
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--data[A data directory of `ckbrowse serve`, opened directly instead of through a server.]:data:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_schema_deploy() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar arg_specs=(
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--data[A data directory of `ckbrowse serve`, opened directly instead of through a server.]:data:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_schema_reset() {
    local -i ret=1
    local -ar ___environment=('development' 'production')
    local -ar ___database=('public' 'private' 'shared')
    local -ar arg_specs=(
        '--confirm[The container ID, confirming the deletion without asking.]:container:'
        '--profile[A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env\: CKBROWSE_PROFILE).]:profile:'
        '--server[Server URL (default https\://api.apple-cloudkit.com; env\: CLOUDKIT_SERVER).]:server:'
        '--container[Container ID, e.g. iCloud.com.example.Notes (env\: CLOUDKIT_CONTAINER).]:container:'
        '--environment[development or production (env\: CLOUDKIT_ENVIRONMENT).]:environment:{__ckbrowse_complete "${___environment[@]}"}'
        '--database[public, private or shared (env\: CLOUDKIT_DATABASE).]:database:{__ckbrowse_complete "${___database[@]}"}'
        '--api-token[API token. Prefer CLOUDKIT_API_TOKEN or a profile\: flags show in ps.]:api-token:'
        '--web-auth-token[Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.]:web-auth-token:'
        '--key-id[Server-to-server Key ID (env\: CLOUDKIT_KEY_ID).]:key-id:'
        '--key-file[Server-to-server private key PEM file, mode 600 (env\: CLOUDKIT_KEY_FILE).]:key-file:'
        '--demo-user[The embedded demo'\''s user\: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).]:demo-user:'
        '--read-only[Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).]'
        '--data[A data directory of `ckbrowse serve`, opened directly instead of through a server.]:data:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_serve() {
    local -i ret=1
    local -ar arg_specs=(
        '--data[Directory for the SQLite database (created if missing).]:data:'
        '--in-memory[Keep the data in memory only (a RAM-backed temporary directory, removed on exit)\: for test runs. Writes are then answered on the event loop, without thread hops.]'
        '--config[Users, tokens, keys, the containers each may use, and allowed origins, from a TOML file (flags add to it).]:file.toml:'
        '--import[Start from a snapshot (a directory --export-on-exit wrote) into an empty --data or --in-memory.]:dir:'
        '--export-on-exit[On SIGINT/SIGTERM, write a snapshot of all data to this directory.]:dir:'
        '--host[Address to bind.]:host:'
        '--port[Port to listen on (0 picks a free port).]:port:'
        '*--api-token[An accepted ckAPIToken, for CONTAINER only when given (else --container'\''s, else any) (repeatable). env\:VAR or file\:PATH reads it from there, out of sight of ps.]:token\[@container\]:'
        '*--user[A user, the web auth token that signs them in (env\:VAR or file\:PATH reads it from there), and optionally the email others find them by (repeatable).]:name\:web-auth-token\[\:email\]:'
        '*--server-key[A server-to-server Key ID and its public key PEM file (repeatable).]:key-id\:public-key.pem:'
        '--seed[Fill the database with a data set on first start (demo).]:name:'
        '--origin-exclusion[Whether the writer'\''s own push tokens are notified\: none (default), session, or header (X-CK-Device-Token).]:origin-exclusion:'
        '--update-match[Which version of an updated record a query subscription matches\: after (default) or before_or_after.]:update-match:'
        '--hold-seconds[How long a webcourier long-poll waits before an empty keep-alive answer.]:hold-seconds:'
        '--max-queued[Notifications kept per push token while nobody polls (oldest dropped first).]:max-queued:'
        '--payload-limit[Push payloads above this many bytes are pruned and marked.]:payload-limit:'
        '--answer-cache-mb[Megabytes of read answers kept for repeated requests until the next commit (0 turns the cache off).]:answer-cache-mb:'
        '--max-asset-mb[The largest asset file an upload URL takes, in MB\: 15 as the assets/upload page says, up to 50 as the Data Size Limits page says.]:max-asset-mb:'
        '--schema[Import this schema into development at start (as cktool import-schema).]:file.ckdb:'
        '--container[The container --schema and --role apply to (default\: the demo'\''s with --seed demo), and the one --api-token and --server-key are bound to.]:container:'
        '*--role[Give a user a custom role of the schema, in both environments (repeatable).]:user\:role:'
        '*--allow-origin[A web origin whose pages may call the server (CORS; repeatable; '\''*'\'' for any; default\: pages served from this machine).]:origin:'
        '*--allow-host[A host name requests may be addressed to, besides IP addresses and localhost (repeatable; DNS rebinding is refused).]:name:'
        '--web-token-lifetime[Seconds a web auth token the server mints (sign-in, and the one each answer carries) stays valid.]:web-token-lifetime:'
        '--import-credentials[With --import\: also accept the API tokens, users and keys the snapshot carries, and keep its token secret.]'
        '--endpoints[Print every endpoint, who may call it and from where (as SERVER.md'\''s table), and exit.]:markdown|json:'
        '--export-credentials[With --export-on-exit\: also write this run'\''s API tokens, users and keys, and the token secret, into the snapshot.]'
        '--single-use-tokens[Accept each web auth token once, as Apple documents (the live service was seen accepting old ones).]'
        '--no-index-rules[Answer queries the schema'\''s indexes do not allow (CloudKit refuses them).]'
        '--header-timeout[Seconds a client has to send a request'\''s head (and the longest pause inside a body); a slower one is disconnected.]:header-timeout:'
        '--idle-timeout[Seconds a keep-alive connection may stay open with no request.]:idle-timeout:'
        '--write-timeout[Seconds an answer may wait for its client to read any of it; then the connection is closed and the answer freed.]:write-timeout:'
        '--max-connections[Connections served at once; more get 503 TRY_AGAIN_LATER (default 1024, less when the open-files limit is low).]:max-connections:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_bench() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'decode:Decode speed of a records/changes page: fast decoder vs JSONDecoder vs CPython json.loads.'
            'serve:Local server over loopback: change and query pages per second; 200-op atomic modify vs 200 single requests; index rules and shared zones against their baselines.'
            'terminal:Bytes written to the terminal for a one-line scroll and for a full redraw.'
            'memory:Resident memory after paging 10k, 100k and 1M records in the browser.'
            'reopen:Reopen a 100k-record zone with 1% changed: requests and bytes against a cold open.'
            'keypress:Key presses in the browser core over a cache of N records (for callgrind).'
            'network:The browser with every answer delayed: PgDn held through a zone, and a cached zone reopened.'
            'bulk:Mark and stage 10k deletions, commit them, export 100k records (time, requests, peak memory).'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        decode|serve|terminal|memory|reopen|keypress|network|bulk)
            "_ckbrowse_bench_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_ckbrowse_bench_decode() {
    local -i ret=1
    local -ar arg_specs=(
        '--records[Records in the page.]:records:'
        '--runs[Timed repetitions per figure (the median is printed).]:runs:'
        '--iterations[Decodes per repetition.]:iterations:'
        '--python[Python interpreter for the comparison (skipped if missing).]:python:'
        '--dump[Print the page'\''s JSON and exit.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_bench_serve() {
    local -i ret=1
    local -ar arg_specs=(
        '--records[Records in the zone that is paged through.]:records:'
        '--runs[Repetitions per figure (the median is printed).]:runs:'
        '--clients[Concurrent clients for the aggregate paging figure.]:clients:'
        '--scaling[Records per zone for the query-scaling table (comma-separated; the first is the base of the ratios; 0 or empty skips it).]:scaling:'
        '--scaling-only[Print only the query-scaling table.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_bench_terminal() {
    local -i ret=1
    local -ar arg_specs=(
        '--term[Terminal type (terminfo entry).]:term:'
        '--width:width:'
        '--height:height:'
        '--show-bytes[Print the bytes of the one-line scroll, escaped.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_bench_memory() {
    local -i ret=1
    local -ar arg_specs=(
        '--records[Records in the zone.]:records:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_bench_reopen() {
    local -i ret=1
    local -ar arg_specs=(
        '--records[Records in the zone.]:records:'
        '--changed-percent[Percent of records changed before the reopen.]:changed-percent:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_bench_keypress() {
    local -i ret=1
    local -ar arg_specs=(
        '--records[Records in the list.]:records:'
        '--presses[Key presses to make.]:presses:'
        '--cache-directory[Cache directory to fill (once) and reuse.]:cache-directory:'
        '--prepare-only[Only fill the cache.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_bench_network() {
    local -i ret=1
    local -ar arg_specs=(
        '--delay-ms[Milliseconds added to every answer.]:delay-ms:'
        '--records[Records in the zone.]:records:'
        '--rate[PgDn presses a second.]:rate:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_bench_bulk() {
    local -i ret=1
    local -ar arg_specs=(
        '--deletions[Records marked, deleted and committed.]:deletions:'
        '--exported[Records exported.]:exported:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_ckbrowse_help() {
    local -i ret=1
    local -ar arg_specs=(
        '*:subcommands:'
        '--version[Show the version.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

if [[ "${funcstack[1]}" = _ckbrowse ]]; then
    _ckbrowse "${@}"
else
    compdef _ckbrowse ckbrowse
fi
