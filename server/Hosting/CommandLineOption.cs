using System.Globalization;
using Jackdaw.Server.Changes;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// One option of the server's command line: the switch, the configuration key it sets, and what
/// <c>--help</c> says of it. <see cref="All"/> is the one place an option is declared: the parser
/// accepts these and nothing else, and the help text is printed from them, defaults included.
/// </summary>
/// <param name="Name">The switch, e.g. <c>--urls</c>; for a whole section, its prefix (<c>--Logging:</c>).</param>
/// <param name="Key">The configuration key it sets (for a section, the prefix; the rest of the name follows it).</param>
/// <param name="Value">What the value is, as help shows it (<c>URLS</c>, <c>BYTES</c>).</param>
/// <param name="Example">A value to show in "needs a value" errors.</param>
/// <param name="Pattern">The name as help shows it, when not <paramref name="Name"/> (a section's common key).</param>
internal sealed record CommandLineOption(
    string Name,
    string Key,
    string Value,
    string Description,
    string Default,
    string Environment,
    string Example,
    string? Pattern = null)
{
    public static IReadOnlyList<CommandLineOption> All { get; } = Create();

    /// <summary>True for a configuration section: any key under it is accepted (<c>--Logging:LogLevel:Default</c>).</summary>
    public bool IsSection => Name.EndsWith(':');

    /// <summary>The name as help shows it.</summary>
    public string Shown => Pattern ?? Name;

    /// <summary>The option <paramref name="name"/> (without its value) is, or null.</summary>
    public static CommandLineOption? Find(string name) => All.FirstOrDefault(option => option.IsSection
        ? name.Length > option.Name.Length && name.StartsWith(option.Name, StringComparison.OrdinalIgnoreCase)
        : name.Equals(option.Name, StringComparison.OrdinalIgnoreCase));

    /// <summary>The configuration key <paramref name="name"/>, a name this option matched, sets.</summary>
    public string KeyFor(string name) => IsSection ? Key + name[Name.Length..] : Key;

    private static List<CommandLineOption> Create()
    {
        var changes = new ChangesOptions();
        return
        [
            new("--urls", "Urls", "URLS",
                "Addresses to listen on, ';'-separated; port 0 takes any free port.",
                ServerOptions.DefaultUrls, "JACKDAW_URLS (or ASPNETCORE_URLS)", ServerOptions.DefaultUrls),
            new("--ServerUrl", "ServerUrl", "URLS",
                "RavenDB's name for --urls (wins over it).",
                ServerOptions.DefaultUrls, "JACKDAW_SERVERURL", ServerOptions.DefaultUrls),
            new("--PublicServerUrl", "PublicServerUrl", "URL",
                "How clients and the other nodes of the cluster reach this server (RavenDB's name; wins over\n"
                + "--public-url).",
                "the first address listened on", "JACKDAW_PUBLICSERVERURL", "http://10.0.0.2:8080"),
            new("--Cluster:", "Cluster:", "VALUE",
                "The cluster (docs/architecture.md, \"Cluster\"). Keys: Passive=true (a fresh node waits to be\n"
                + "added with PUT /admin/cluster/node on a member), Join=URL (a fresh node asks the member at URL\n"
                + "to add it), ElectionTimeoutMs (1000: a silent leader is replaced after about this long),\n"
                + "SnapshotEvery (64: applied commands between snapshots of the cluster's state).",
                "a lone node, tag A", "JACKDAW_CLUSTER__JOIN, ...", "http://127.0.0.1:8080", Pattern: "--Cluster:KEY"),
            new("--data-dir", "DataDir", "FOLDER",
                "The data folder; a relative path is taken from the working directory.",
                ServerOptions.DefaultDataDir, "JACKDAW_DATADIR", ServerOptions.DefaultDataDir),
            new("--max-body-size", "MaxRequestBodySize", "BYTES",
                "The largest request body the server accepts, but a bulk insert's stream: the ceiling of\n"
                + "the --Limits:Max...BodySize limits of each route.",
                $"{ServerOptions.DefaultMaxRequestBodySize} ({ServerOptions.DefaultMaxRequestBodySize >> 20} MiB)",
                "JACKDAW_MAXREQUESTBODYSIZE", Number(ServerOptions.DefaultMaxRequestBodySize)),
            new("--public-url", "PublicUrl", "URL",
                "The URL clients reach the server by through a proxy (what /topology gives RavenDB's clients).",
                "the URL each request arrives with", "JACKDAW_PUBLICURL", "https://db.example.com"),
            new("--Changes:QueueCapacity", "Changes:QueueCapacity", "N",
                "Changes-feed events a connection may have waiting before it is closed as TooSlow.",
                Number(changes.QueueCapacity), "JACKDAW_CHANGES__QUEUECAPACITY", Number(changes.QueueCapacity)),
            new("--Changes:MaxCommandBytes", "Changes:MaxCommandBytes", "BYTES",
                "The largest command a changes-feed client may send.",
                $"that of --Limits:MaxWebSocketMessageSize ({Number(changes.MaxCommandBytes)})", "JACKDAW_CHANGES__MAXCOMMANDBYTES", Number(changes.MaxCommandBytes)),
            new("--Changes:CloseGrace", "Changes:CloseGrace", "TIME",
                "The time a closing changes-feed connection gets (hh:mm:ss or seconds, at most 1 hour).",
                Time(changes.CloseGrace), "JACKDAW_CHANGES__CLOSEGRACE", Time(changes.CloseGrace)),
            new("--Changes:EventStreamHeartbeat", "Changes:EventStreamHeartbeat", "TIME",
                "How often an idle event stream sends a heartbeat (hh:mm:ss or seconds, at most 1 hour).",
                Time(changes.EventStreamHeartbeat), "JACKDAW_CHANGES__EVENTSTREAMHEARTBEAT", Time(changes.EventStreamHeartbeat)),
            new("--Attachments:MaxSize", "Attachments:MaxSize", "BYTES",
                "The largest attachment an upload may carry (streamed to disk, never held in memory).",
                $"{AttachmentOptions.DefaultMaxSize} ({AttachmentOptions.DefaultMaxSize >> 30} GiB)", "JACKDAW_ATTACHMENTS__MAXSIZE", Number(AttachmentOptions.DefaultMaxSize)),
            new("--Queries:SlowQueryThresholdMs", "Queries:SlowQueryThresholdMs", "MS",
                "A query taking at least this long goes to its database's slow-query log; 0 logs all.",
                Number(Queries.SlowQueryOptions.DefaultThresholdMs), "JACKDAW_QUERIES__SLOWQUERYTHRESHOLDMS", Number(Queries.SlowQueryOptions.DefaultThresholdMs)),
            new("--Queries:SlowQueryLogSize", "Queries:SlowQueryLogSize", "N",
                "The most slow queries each database keeps (GET /databases/{db}/queries/slow).",
                Number(Queries.SlowQueryOptions.DefaultLogSize), "JACKDAW_QUERIES__SLOWQUERYLOGSIZE", Number(Queries.SlowQueryOptions.DefaultLogSize)),
            new("--Security:", "Security:", "VALUE",
                "Secures the server (HTTPS, client certificates; README, \"Security\"). Keys:\n"
                + "Certificate:Path (a PFX, or a PEM certificate), Certificate:KeyPath (its PEM key),\n"
                + "Certificate:Password (the PFX's), WellKnownAdminCertificates (ClusterAdmin thumbprints),\n"
                + "UnsecuredAccessAllowed=PublicNetwork (serve other machines without HTTPS).",
                "unsecured, loopback only", "JACKDAW_SECURITY__CERTIFICATE__PATH, ...", "/etc/jackdaw/server.pfx", Pattern: "--Security:KEY"),
            .. ServerLimits.CommandLineOptions(),
            new("--Metrics:", "Metrics:", "VALUE",
                "Metrics at GET /metrics (Prometheus text; docs/architecture.md, \"Metrics and tracing\"). Keys:\n"
                + "Enabled=false (measure nothing), MaxDatabaseSeries (64), MaxIndexSeries (30, per database):\n"
                + "the databases or indexes past them are summed under \"_other\".",
                "enabled", "JACKDAW_METRICS__ENABLED, ...", "false", Pattern: "--Metrics:KEY"),
            new("--OpenTelemetry:", "OpenTelemetry:", "VALUE",
                "Exports the same metrics and request traces over OTLP. Keys: Endpoint (http://collector:4318),\n"
                + "Protocol (http/protobuf or grpc), ExportInterval (hh:mm:ss or seconds, default 60).",
                "off", "JACKDAW_OPENTELEMETRY__ENDPOINT, ...", "http://127.0.0.1:4318", Pattern: "--OpenTelemetry:KEY"),
            new("--Logging:", "Logging:", "LEVEL",
                "The log level of a category and those under it (Default: every category; Jackdaw.Requests\n"
                + "logs each request at Debug): Trace, Debug, Information, Warning, Error, Critical or None.\n"
                + "Other keys of the Logging section work as in ASP.NET Core (--Logging:Console:FormatterName).",
                "Information, Microsoft.AspNetCore Warning (appsettings.json)",
                "Logging__LogLevel__CATEGORY", "Debug", Pattern: "--Logging:LogLevel:CATEGORY"),
        ];
    }

    private static string Number(long value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Time(TimeSpan value) => value.ToString(@"hh\:mm\:ss", CultureInfo.InvariantCulture);
}
