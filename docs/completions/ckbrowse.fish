function __ckbrowse_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __ckbrowse_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __ckbrowse_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __ckbrowse_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __ckbrowse_parse_tokens -S
    set -l unparsed_tokens (__ckbrowse_tokens -pc)
    switch $unparsed_tokens[1]
    case 'ckbrowse'
        __ckbrowse_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'browse'
            __ckbrowse_parse_subcommand 0 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'version' 'h/help'
        case 'zones'
            __ckbrowse_parse_subcommand 0 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'output=' 'json' 'version' 'h/help'
        case 'changes'
            __ckbrowse_parse_subcommand 1 'since=' 'all' 'limit=' 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'output=' 'json' 'version' 'h/help'
        case 'query'
            __ckbrowse_parse_subcommand 1 'filter=+' 'sort=+' 'zone=' 'limit=' 'all' 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'output=' 'json' 'version' 'h/help'
        case 'get'
            __ckbrowse_parse_subcommand -r 1 'zone=' 'asset=' 'index=' 'to=' 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'output=' 'json' 'version' 'h/help'
        case 'subscriptions'
            __ckbrowse_parse_subcommand 1 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'output=' 'json' 'version' 'h/help'
        case 'apply'
            __ckbrowse_parse_subcommand 1 'dry-run' 'non-atomic' 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'version' 'h/help'
        case 'schema'
            __ckbrowse_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'export'
                __ckbrowse_parse_subcommand 0 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'data=' 'version' 'h/help'
            case 'import'
                __ckbrowse_parse_subcommand 1 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'data=' 'version' 'h/help'
            case 'validate'
                __ckbrowse_parse_subcommand 1 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'data=' 'version' 'h/help'
            case 'deploy'
                __ckbrowse_parse_subcommand 0 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'data=' 'version' 'h/help'
            case 'reset'
                __ckbrowse_parse_subcommand 0 'confirm=' 'profile=' 'server=' 'container=' 'environment=' 'database=' 'api-token=' 'web-auth-token=' 'key-id=' 'key-file=' 'demo-user=' 'read-only' 'data=' 'version' 'h/help'
            end
        case 'serve'
            __ckbrowse_parse_subcommand 0 'data=' 'in-memory' 'config=' 'import=' 'export-on-exit=' 'host=' 'port=' 'api-token=+' 'user=+' 'server-key=+' 'seed=' 'origin-exclusion=' 'update-match=' 'hold-seconds=' 'max-queued=' 'payload-limit=' 'answer-cache-mb=' 'max-asset-mb=' 'schema=' 'container=' 'role=+' 'allow-origin=+' 'single-use-tokens' 'no-index-rules' 'version' 'h/help'
        case 'bench'
            __ckbrowse_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'decode'
                __ckbrowse_parse_subcommand 0 'records=' 'runs=' 'iterations=' 'python=' 'dump' 'version' 'h/help'
            case 'serve'
                __ckbrowse_parse_subcommand 0 'records=' 'runs=' 'clients=' 'version' 'h/help'
            case 'terminal'
                __ckbrowse_parse_subcommand 0 'term=' 'width=' 'height=' 'show-bytes' 'version' 'h/help'
            case 'memory'
                __ckbrowse_parse_subcommand 0 'records=' 'version' 'h/help'
            case 'reopen'
                __ckbrowse_parse_subcommand 0 'records=' 'changed-percent=' 'version' 'h/help'
            case 'keypress'
                __ckbrowse_parse_subcommand 0 'records=' 'presses=' 'cache-directory=' 'prepare-only' 'version' 'h/help'
            end
        case 'help'
            __ckbrowse_parse_subcommand -r 1 'version'
        end
    end
end

function __ckbrowse_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __ckbrowse_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __ckbrowse_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __ckbrowse_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__ckbrowse_tokens -p)
    if test -z "$(__ckbrowse_tokens -t)"
        set -l index (count (__ckbrowse_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'ckbrowse' -f
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'browse' -d 'Browse a CloudKit container in the terminal (the default command).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'zones' -d 'List the zones of a database.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'changes' -d 'Read a zone\'s change feed (records/changes).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'query' -d 'Query records of a type (records/query).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'get' -d 'Look records up by name (records/lookup).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'subscriptions' -d 'List subscriptions, or show one.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'apply' -d 'Send a records/modify batch file, atomic by default, and print per-record results as JSON.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'schema' -d 'Export, import, validate, deploy or reset a schema in the CloudKit Schema Language (.ckdb, as cktool uses).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'serve' -d 'Run a local CloudKit Web Services server backed by SQLite.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'bench' -d 'Run a benchmark and print its figures (build with -c release for real numbers).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse browse" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" output' -l 'output' -d 'json (one object per line) or table. Default: table on a terminal, json otherwise.' -rfka 'json table'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" json' -l 'json' -d 'Print one JSON document: an array of the objects (instead of one object per line).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse zones" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" since' -l 'since' -d 'Resume after this sync token (from an earlier run\'s last line).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" all' -l 'all' -d 'Follow the feed to its end (every page).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" limit' -l 'limit' -d 'Records per page (1-200).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" output' -l 'output' -d 'json (one object per line) or table. Default: table on a terminal, json otherwise.' -rfka 'json table'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" json' -l 'json' -d 'Print one JSON document: an array of the objects (instead of one object per line).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse changes" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query"' -l 'filter' -d 'A filter (repeatable).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query"' -l 'sort' -d 'Sort by a field, ascending (or :desc) (repeatable).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" zone' -l 'zone' -d 'The zone (default: the default zone).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" limit' -l 'limit' -d 'Records per page (1-200).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" all' -l 'all' -d 'Follow continuation markers to the last page.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" output' -l 'output' -d 'json (one object per line) or table. Default: table on a terminal, json otherwise.' -rfka 'json table'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" json' -l 'json' -d 'Print one JSON document: an array of the objects (instead of one object per line).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse query" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" zone' -l 'zone' -d 'The zone (default: the default zone).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" asset' -l 'asset' -d 'Write this ASSETID field\'s file instead of printing the record (one record name; needs --to).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" index' -l 'index' -d 'With --asset: the element of an ASSETID_LIST field (0 first).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" to' -l 'to' -d 'With --asset: the file to write (- for standard output).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" output' -l 'output' -d 'json (one object per line) or table. Default: table on a terminal, json otherwise.' -rfka 'json table'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" json' -l 'json' -d 'Print one JSON document: an array of the objects (instead of one object per line).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse get" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" output' -l 'output' -d 'json (one object per line) or table. Default: table on a terminal, json otherwise.' -rfka 'json table'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" json' -l 'json' -d 'Print one JSON document: an array of the objects (instead of one object per line).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse subscriptions" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" dry-run' -l 'dry-run' -d 'Print the request that would be sent and send nothing.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" non-atomic' -l 'non-atomic' -d 'Apply the operations non-atomically (each succeeds or fails on its own).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse apply" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse schema" -eq 1' -fa 'export' -d 'Print a container\'s schema (development by default) as a .ckdb file.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse schema" -eq 1' -fa 'import' -d 'Replace development\'s schema with a .ckdb file (as cktool import-schema).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse schema" -eq 1' -fa 'validate' -d 'Check a .ckdb file: its syntax and rules, and (with --server or --data) what production would refuse.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse schema" -eq 1' -fa 'deploy' -d 'Promote development\'s schema to production (the Console\'s Deploy Schema Changes).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse schema" -eq 1' -fa 'reset' -d 'Return development\'s schema to production\'s and delete all development data.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" data' -l 'data' -d 'A data directory of `ckbrowse serve`, opened directly instead of through a server.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema export" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" data' -l 'data' -d 'A data directory of `ckbrowse serve`, opened directly instead of through a server.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema import" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" data' -l 'data' -d 'A data directory of `ckbrowse serve`, opened directly instead of through a server.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema validate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" data' -l 'data' -d 'A data directory of `ckbrowse serve`, opened directly instead of through a server.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema deploy" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" confirm' -l 'confirm' -d 'The container ID, confirming the deletion without asking.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" profile' -l 'profile' -d 'A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" server' -l 'server' -d 'Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" container' -l 'container' -d 'Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" environment' -l 'environment' -d 'development or production (env: CLOUDKIT_ENVIRONMENT).' -rfka 'development production'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" database' -l 'database' -d 'public, private or shared (env: CLOUDKIT_DATABASE).' -rfka 'public private shared'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" api-token' -l 'api-token' -d 'API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" web-auth-token' -l 'web-auth-token' -d 'Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" key-id' -l 'key-id' -d 'Server-to-server Key ID (env: CLOUDKIT_KEY_ID).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" key-file' -l 'key-file' -d 'Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" demo-user' -l 'demo-user' -d 'The embedded demo\'s user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" read-only' -l 'read-only' -d 'Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" data' -l 'data' -d 'A data directory of `ckbrowse serve`, opened directly instead of through a server.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse schema reset" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" data' -l 'data' -d 'Directory for the SQLite database (created if missing).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" in-memory' -l 'in-memory' -d 'Keep the data in memory only (a RAM-backed temporary directory, removed on exit): for test runs.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" config' -l 'config' -d 'Users, tokens, keys, the containers each may use, and allowed origins, from a TOML file (flags add to it).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" import' -l 'import' -d 'Start from a snapshot (a directory --export-on-exit wrote) into an empty --data or --in-memory.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" export-on-exit' -l 'export-on-exit' -d 'On SIGINT/SIGTERM, write a snapshot of all data to this directory.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" host' -l 'host' -d 'Address to bind.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" port' -l 'port' -d 'Port to listen on (0 picks a free port).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve"' -l 'api-token' -d 'An accepted ckAPIToken, for CONTAINER only when given (else --container\'s, else any) (repeatable).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve"' -l 'user' -d 'A user, the web auth token that signs them in, and optionally the email others find them by (repeatable).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve"' -l 'server-key' -d 'A server-to-server Key ID and its public key PEM file (repeatable).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" seed' -l 'seed' -d 'Fill the database with a data set on first start (demo).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" origin-exclusion' -l 'origin-exclusion' -d 'Whether the writer\'s own push tokens are notified: none (default), session, or header (X-CK-Device-Token).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" update-match' -l 'update-match' -d 'Which version of an updated record a query subscription matches: after (default) or before_or_after.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" hold-seconds' -l 'hold-seconds' -d 'How long a webcourier long-poll waits before an empty keep-alive answer.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" max-queued' -l 'max-queued' -d 'Notifications kept per push token while nobody polls (oldest dropped first).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" payload-limit' -l 'payload-limit' -d 'Push payloads above this many bytes are pruned and marked.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" answer-cache-mb' -l 'answer-cache-mb' -d 'Megabytes of read answers kept for repeated requests until the next commit (0 turns the cache off).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" max-asset-mb' -l 'max-asset-mb' -d 'The largest asset file an upload URL takes, in MB: 15 as the assets/upload page says, up to 50 as the Data Size Limits page says.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" schema' -l 'schema' -d 'Import this schema into development at start (as cktool import-schema).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" container' -l 'container' -d 'The container --schema and --role apply to (default: the demo\'s with --seed demo), and the one --api-token and --server-key are bound to.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve"' -l 'role' -d 'Give a user a custom role of the schema, in both environments (repeatable).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve"' -l 'allow-origin' -d 'A web origin whose pages may call the server (CORS; repeatable; default: any).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" single-use-tokens' -l 'single-use-tokens' -d 'Accept each web auth token once, as Apple documents (the live service was seen accepting old ones).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" no-index-rules' -l 'no-index-rules' -d 'Answer queries the schema\'s indexes do not allow (CloudKit refuses them).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse serve" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse bench" -eq 1' -fa 'decode' -d 'Decode speed of a records/changes page: fast decoder vs JSONDecoder vs CPython json.loads.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse bench" -eq 1' -fa 'serve' -d 'Local server over loopback: records/changes pages per second; 200-op atomic modify vs 200 single requests.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse bench" -eq 1' -fa 'terminal' -d 'Bytes written to the terminal for a one-line scroll and for a full redraw.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse bench" -eq 1' -fa 'memory' -d 'Resident memory after paging 10k, 100k and 1M records in the browser.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse bench" -eq 1' -fa 'reopen' -d 'Reopen a 100k-record zone with 1% changed: requests and bytes against a cold open.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_positional "ckbrowse bench" -eq 1' -fa 'keypress' -d 'Key presses in the browser core over a cache of N records (for callgrind).'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench decode" records' -l 'records' -d 'Records in the page.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench decode" runs' -l 'runs' -d 'Timed repetitions per figure (the median is printed).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench decode" iterations' -l 'iterations' -d 'Decodes per repetition.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench decode" python' -l 'python' -d 'Python interpreter for the comparison (skipped if missing).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench decode" dump' -l 'dump' -d 'Print the page\'s JSON and exit.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench decode" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench decode" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench serve" records' -l 'records' -d 'Records in the zone that is paged through.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench serve" runs' -l 'runs' -d 'Repetitions per figure (the median is printed).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench serve" clients' -l 'clients' -d 'Concurrent clients for the aggregate paging figure.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench serve" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench serve" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench terminal" term' -l 'term' -d 'Terminal type (terminfo entry).' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench terminal" width' -l 'width' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench terminal" height' -l 'height' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench terminal" show-bytes' -l 'show-bytes' -d 'Print the bytes of the one-line scroll, escaped.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench terminal" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench terminal" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench memory" records' -l 'records' -d 'Records in the zone.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench memory" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench memory" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench reopen" records' -l 'records' -d 'Records in the zone.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench reopen" changed-percent' -l 'changed-percent' -d 'Percent of records changed before the reopen.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench reopen" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench reopen" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench keypress" records' -l 'records' -d 'Records in the list.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench keypress" presses' -l 'presses' -d 'Key presses to make.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench keypress" cache-directory' -l 'cache-directory' -d 'Cache directory to fill (once) and reuse.' -rfka ''
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench keypress" prepare-only' -l 'prepare-only' -d 'Only fill the cache.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench keypress" version' -l 'version' -d 'Show the version.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse bench keypress" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'ckbrowse' -n '__ckbrowse_should_offer_completions_for_flags_or_options "ckbrowse help" version' -l 'version' -d 'Show the version.'
