namespace Jackdaw.Server.Hosting;

/// <summary>
/// Server settings. Sources, later ones winning: <c>appsettings.json</c> beside the executable,
/// environment variables prefixed <c>JACKDAW_</c> (e.g. <c>JACKDAW_DATADIR</c>, <c>JACKDAW_URLS</c>;
/// <c>ASPNETCORE_URLS</c> works too), then the command line (<c>--urls</c>, <c>--data-dir</c>, ...:
/// <see cref="CommandLineOption.All"/>, which <c>--help</c> prints).
/// </summary>
public sealed class ServerOptions
{
    public const string DefaultUrls = "http://127.0.0.1:8080";
    public const string DefaultSecuredUrls = "https://127.0.0.1:8080";
    public const string DefaultDataDir = "./data";
    public const long DefaultMaxRequestBodySize = 256L * 1024 * 1024;

    public string Urls { get; set; } = DefaultUrls;

    /// <summary>The data folder, as an absolute path (resolved against the working directory).</summary>
    public string DataDir { get; set; } = Path.GetFullPath(DefaultDataDir);

    public long MaxRequestBodySize { get; set; } = DefaultMaxRequestBodySize;

    /// <summary>
    /// The URL clients reach this server by, when it differs from the one a request arrives with
    /// (a reverse proxy that terminates TLS or adds a path prefix): what <c>/topology</c> gives
    /// RavenDB's clients as the node's URL. Null: the request's own scheme and host.
    /// </summary>
    public string? PublicUrl { get; set; }

    /// <summary>
    /// The cluster: <c>PublicServerUrl</c> (how the other nodes reach this one), <c>Cluster:Passive</c>,
    /// <c>Cluster:Join</c>, <c>Cluster:ElectionTimeoutMs</c> (server/Cluster, docs/architecture.md "Cluster").
    /// </summary>
    public Cluster.ClusterOptions Cluster { get; set; } = new();

    /// <summary>HTTPS and client certificates (<c>Security:*</c>); unsecured when no certificate is given.</summary>
    public Security.SecurityOptions Security { get; set; } = new();

    /// <summary>
    /// Replication peers given in the configuration, for a node without the cluster (tests, a
    /// fixed pair): <c>Replication:Topology:{database}</c> = <c>B=http://10.0.0.2:8080;C=...</c>,
    /// the other nodes of the database by tag and URL. Applied once at start as the cluster's
    /// <c>SetTopology</c> would be (with <see cref="Databases.DocumentDatabaseOptions.NodeTag"/> as
    /// this node's tag); the cluster's later calls replace it.
    /// </summary>
    public IReadOnlyDictionary<string, IReadOnlyList<Replication.ReplicationNode>> ReplicationTopology { get; set; } = new Dictionary<string, IReadOnlyList<Replication.ReplicationNode>>();

    /// <summary>Settings every database of this server opens with.</summary>
    public Databases.DocumentDatabaseOptions Database { get; set; } = new();

    /// <summary>The clock and backup of every database's periodic backup tasks (tests replace them).</summary>
    public Backup.PeriodicBackupOptions Backup { get; set; } = new();

    /// <summary>Settings of every database's indexes.</summary>
    public Indexing.IndexingOptions Indexing { get; set; } = new();

    /// <summary>
    /// Limits of every database's changes-feed connections: <c>Changes:QueueCapacity</c>,
    /// <c>Changes:MaxCommandBytes</c>, <c>Changes:CloseGrace</c>, <c>Changes:EventStreamHeartbeat</c>
    /// (times as <c>hh:mm:ss</c> or seconds, at most an hour; e.g. <c>JACKDAW_CHANGES__QUEUECAPACITY=131072</c>).
    /// </summary>
    public Changes.ChangesOptions Changes { get; set; } = new();

    /// <summary>Limits against abuse: body sizes per route, headers, connections, data rate, WebSocket messages, queries (<c>Limits:*</c>).</summary>
    public ServerLimits Limits { get; set; } = new();

    /// <summary>Attachments: the largest one an upload may carry (<c>Attachments:MaxSize</c>, default 2 GiB).</summary>
    public AttachmentOptions Attachments { get; set; } = new();

    /// <summary>Every database's slow-query log: <c>Queries:SlowQueryThresholdMs</c> (default 500, 0 logs every query), <c>Queries:SlowQueryLogSize</c> (default 256).</summary>
    public Queries.SlowQueryOptions SlowQueries { get; set; } = new();
    /// <summary>Metrics (<c>Metrics:*</c>: <c>/metrics</c>, its label caps) and the OpenTelemetry export (<c>OpenTelemetry:*</c>).</summary>
    public Diagnostics.MetricsOptions Metrics { get; set; } = new();

    public static ServerOptions FromConfiguration(IConfiguration configuration)
    {
        var options = new ServerOptions { Security = Jackdaw.Server.Security.SecurityOptions.FromConfiguration(configuration.GetSection("Security")) };
        // RavenDB's ServerUrl names the same setting as Urls (and wins over it).
        if (configuration["ServerUrl"] is { Length: > 0 } serverUrl)
        {
            options.Urls = serverUrl;
        }
        else if (configuration["Urls"] is { Length: > 0 } urls)
        {
            options.Urls = urls;
        }
        else if (options.Security.IsSecured)
        {
            options.Urls = DefaultSecuredUrls;
        }
        foreach (var url in options.Urls.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            CheckUrl(url, options.Security);
        }
        if (configuration["DataDir"] is { Length: > 0 } dataDir)
        {
            options.DataDir = Path.GetFullPath(dataDir);
        }
        if ((configuration["PublicServerUrl"] is { Length: > 0 } ? configuration["PublicServerUrl"] : configuration["PublicUrl"]) is { Length: > 0 } publicUrl)
        {
            if (!Uri.TryCreate(publicUrl, UriKind.Absolute, out var parsed) || parsed.Scheme is not ("http" or "https"))
            {
                throw new InvalidOperationException($"PublicUrl '{publicUrl}' is not an absolute http or https URL; set it with --public-url https://db.example.com or JACKDAW_PUBLICURL.");
            }
            options.PublicUrl = publicUrl.TrimEnd('/');
        }
        options.Cluster = ClusterFrom(configuration);
        if (configuration["MaxRequestBodySize"] is { Length: > 0 } max)
        {
            if (!long.TryParse(max, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var bytes) || bytes <= 0)
            {
                throw new InvalidOperationException($"MaxRequestBodySize '{max}' is not a positive number of bytes; set it with --max-body-size 268435456 or JACKDAW_MAXREQUESTBODYSIZE.");
            }
            options.MaxRequestBodySize = bytes;
        }
        options.Limits = ServerLimits.FromConfiguration(configuration, options.MaxRequestBodySize);
        options.Attachments = AttachmentOptions.FromConfiguration(configuration);
        options.SlowQueries = SlowQueriesFrom(configuration.GetSection("Queries"));
        options.Metrics = MetricsFrom(configuration);
        options.Changes = ChangesFrom(configuration.GetSection("Changes"), new() { MaxCommandBytes = options.Limits.MaxWebSocketMessageSize });
        options.ReplicationTopology = ReplicationTopologyFrom(configuration.GetSection("Replication:Topology"));
        return options;
    }

    private static Cluster.ClusterOptions ClusterFrom(IConfiguration configuration)
    {
        var section = configuration.GetSection("Cluster");
        string? publicServerUrl = null;
        if (configuration["PublicServerUrl"] is { Length: > 0 } text)
        {
            publicServerUrl = Jackdaw.Server.Cluster.ClusterUrls.Normalize(text)
                ?? throw new InvalidOperationException($"PublicServerUrl '{text}' is not an absolute http or https URL with a port other than 0 and no path; set it with --PublicServerUrl http://10.0.0.2:8080 or JACKDAW_PUBLICSERVERURL.");
        }
        var passive = false;
        if (section["Passive"] is { Length: > 0 } on && !bool.TryParse(on, out passive))
        {
            throw new InvalidOperationException($"Cluster:Passive '{on}' is neither true nor false; set it with --Cluster:Passive=true.");
        }
        string? join = null;
        if (section["Join"] is { Length: > 0 } joinText)
        {
            join = Jackdaw.Server.Cluster.ClusterUrls.Normalize(joinText)
                ?? throw new InvalidOperationException($"Cluster:Join '{joinText}' is not a member's URL (absolute http or https, no path); set it with --Cluster:Join http://10.0.0.1:8080.");
        }
        var timeout = PositiveInt(section, "ElectionTimeoutMs", 1000);
        var snapshotEvery = PositiveInt(section, "SnapshotEvery", 64);
        return new Jackdaw.Server.Cluster.ClusterOptions
        {
            PublicServerUrl = publicServerUrl,
            Passive = passive,
            Join = join,
            ElectionTimeoutMs = timeout,
            SnapshotEvery = snapshotEvery,
        };
    }

    private static Dictionary<string, IReadOnlyList<Replication.ReplicationNode>> ReplicationTopologyFrom(IConfigurationSection section)
    {
        var topology = new Dictionary<string, IReadOnlyList<Replication.ReplicationNode>>(StringComparer.OrdinalIgnoreCase);
        foreach (var database in section.GetChildren())
        {
            var nodes = new List<Replication.ReplicationNode>();
            foreach (var entry in (database.Value ?? "").Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                var equals = entry.IndexOf('=', StringComparison.Ordinal);
                if (equals <= 0 || !Uri.TryCreate(entry[(equals + 1)..], UriKind.Absolute, out var url) || url.Scheme is not ("http" or "https"))
                {
                    throw new InvalidOperationException($"{database.Path} '{database.Value}' is not a list of the other nodes as tag=url; set it with --{database.Path}=\"B=http://10.0.0.2:8080;C=http://10.0.0.3:8080\".");
                }
                nodes.Add(new Replication.ReplicationNode(entry[..equals], url.ToString().TrimEnd('/')));
            }
            topology[database.Key] = nodes;
        }
        return topology;
    }

    /// <summary>
    /// An address the server may listen on: https with a certificate (and only then); plain http on
    /// loopback, or on any address when <c>Security:UnsecuredAccessAllowed=PublicNetwork</c> says so.
    /// </summary>
    private static void CheckUrl(string url, Security.SecurityOptions security)
    {
        Microsoft.AspNetCore.Http.BindingAddress address;
        try
        {
            address = Microsoft.AspNetCore.Http.BindingAddress.Parse(url);
        }
        catch (FormatException)
        {
            throw new InvalidOperationException($"Urls '{url}' is not an address to listen on; set it with --urls {DefaultUrls} (several separated by ';') or JACKDAW_URLS.");
        }
        var https = address.Scheme.Equals("https", StringComparison.OrdinalIgnoreCase);
        if (!https && !address.Scheme.Equals("http", StringComparison.OrdinalIgnoreCase))
        {
            throw new InvalidOperationException($"Urls '{url}' is neither http nor https; set it with --urls {DefaultUrls} or JACKDAW_URLS.");
        }
        if (security.IsSecured && !https)
        {
            throw new InvalidOperationException($"Urls '{url}' is plain http but Security:Certificate:Path is set: a secured server listens on https only (--urls https://0.0.0.0:443), so that no request escapes its client-certificate check.");
        }
        if (!security.IsSecured && https)
        {
            throw new InvalidOperationException($"Urls '{url}' is https but no server certificate is given: set --Security:Certificate:Path (a PFX, or PEM with --Security:Certificate:KeyPath), or JACKDAW_SECURITY__CERTIFICATE__PATH.");
        }
        if (!security.IsSecured && !security.UnsecuredPublicNetworkAllowed && !IsLoopback(address.Host))
        {
            throw new InvalidOperationException($"Urls '{url}' would serve other machines without HTTPS or client certificates: anyone who reaches it could read and delete every database. Secure it (--Security:Certificate:Path; README, \"Security\"), or allow it knowingly with --Security:UnsecuredAccessAllowed=PublicNetwork (RavenDB's Security.UnsecuredAccessAllowed; JACKDAW_SECURITY__UNSECUREDACCESSALLOWED=PublicNetwork).");
        }
    }

    /// <summary>True for an address only this machine reaches.</summary>
    public static bool IsLoopback(string host) =>
        host.Equals("localhost", StringComparison.OrdinalIgnoreCase)
        || (System.Net.IPAddress.TryParse(host.Trim('[', ']'), out var ip) && System.Net.IPAddress.IsLoopback(ip));

    private static Diagnostics.MetricsOptions MetricsFrom(IConfiguration configuration)
    {
        var metrics = configuration.GetSection(Diagnostics.MetricsOptions.Section);
        var otel = configuration.GetSection(Diagnostics.MetricsOptions.OpenTelemetrySection);
        Uri? endpoint = null;
        if (otel["Endpoint"] is { Length: > 0 } text)
        {
            if (!Uri.TryCreate(text, UriKind.Absolute, out endpoint) || endpoint.Scheme is not ("http" or "https"))
            {
                throw new InvalidOperationException($"OpenTelemetry:Endpoint '{text}' is not an absolute http or https URL; set it with --OpenTelemetry:Endpoint http://collector:4318 or JACKDAW_OPENTELEMETRY__ENDPOINT.");
            }
        }
        var protocol = otel["Protocol"] is { Length: > 0 } p ? p.Trim().ToLowerInvariant() : "http/protobuf";
        if (protocol is not ("http/protobuf" or "grpc"))
        {
            throw new InvalidOperationException($"OpenTelemetry:Protocol '{protocol}' is neither http/protobuf nor grpc; set it with --OpenTelemetry:Protocol grpc.");
        }
        var enabled = true;
        if (metrics["Enabled"] is { Length: > 0 } on && !bool.TryParse(on, out enabled))
        {
            throw new InvalidOperationException($"Metrics:Enabled '{on}' is neither true nor false; set it with --Metrics:Enabled=false.");
        }
        return new Diagnostics.MetricsOptions
        {
            Enabled = enabled,
            MaxDatabaseSeries = PositiveInt(metrics, "MaxDatabaseSeries", Diagnostics.MetricsOptions.DefaultMaxDatabaseSeries),
            MaxIndexSeries = PositiveInt(metrics, "MaxIndexSeries", Diagnostics.MetricsOptions.DefaultMaxIndexSeries),
            OpenTelemetryEndpoint = endpoint,
            OpenTelemetryProtocol = protocol,
            OpenTelemetryExportInterval = PositiveTime(otel, "ExportInterval", TimeSpan.FromSeconds(60)),
        };
    }

    private static Changes.ChangesOptions ChangesFrom(IConfigurationSection section, Changes.ChangesOptions defaults) => new()
    {
        QueueCapacity = PositiveInt(section, "QueueCapacity", defaults.QueueCapacity),
        MaxCommandBytes = PositiveInt(section, "MaxCommandBytes", defaults.MaxCommandBytes),
        CloseGrace = PositiveTime(section, "CloseGrace", defaults.CloseGrace),
        EventStreamHeartbeat = PositiveTime(section, "EventStreamHeartbeat", defaults.EventStreamHeartbeat),
    };

    private static Queries.SlowQueryOptions SlowQueriesFrom(IConfigurationSection section)
    {
        var threshold = Queries.SlowQueryOptions.DefaultThresholdMs;
        if (section["SlowQueryThresholdMs"] is { Length: > 0 } text
            && (!int.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out threshold) || threshold < 0))
        {
            throw new InvalidOperationException($"{section.Path}:SlowQueryThresholdMs '{text}' is not a whole number of milliseconds (0 logs every query).");
        }
        return new() { ThresholdMs = threshold, LogSize = PositiveInt(section, "SlowQueryLogSize", Queries.SlowQueryOptions.DefaultLogSize) };
    }

    private static int PositiveInt(IConfigurationSection section, string key, int fallback)
    {
        if (section[key] is not { Length: > 0 } text)
        {
            return fallback;
        }
        if (!int.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var value) || value <= 0)
        {
            throw new InvalidOperationException($"{section.Path}:{key} '{text}' is not a positive whole number.");
        }
        return value;
    }

    private static bool TryParseSeconds(string text, out TimeSpan value)
    {
        value = default;
        if (!double.TryParse(text, System.Globalization.NumberStyles.AllowDecimalPoint, System.Globalization.CultureInfo.InvariantCulture, out var seconds) || seconds > 3600)
        {
            return false;
        }
        value = TimeSpan.FromSeconds(seconds);
        return true;
    }

    internal static TimeSpan PositiveTime(IConfigurationSection section, string key, TimeSpan fallback)
    {
        if (section[key] is not { Length: > 0 } text)
        {
            return fallback;
        }
        // A bare number is seconds (TimeSpan would read "5" as five days).
        var parsed = text.Contains(':', StringComparison.Ordinal)
            ? TimeSpan.TryParse(text, System.Globalization.CultureInfo.InvariantCulture, out var value)
            : TryParseSeconds(text, out value);
        if (!parsed || value <= TimeSpan.Zero || value > TimeSpan.FromHours(1))
        {
            throw new InvalidOperationException($"{section.Path}:{key} '{text}' is not a time between 0 and 1 hour such as 00:00:05 or 5 (seconds).");
        }
        return value;
    }
}
