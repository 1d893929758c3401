using System.Globalization;
using KestrelServerLimits = Microsoft.AspNetCore.Server.Kestrel.Core.KestrelServerLimits;
using MinDataRate = Microsoft.AspNetCore.Server.Kestrel.Core.MinDataRate;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// Limits against abuse: the <c>Limits</c> section of the configuration (<c>--Limits:MaxQueryLimit
/// 1000</c>, <c>JACKDAW_LIMITS__MAXQUERYLIMIT=1000</c>, or <c>"Limits": {...}</c> in appsettings.json).
/// Kestrel enforces the connection, header, time and data-rate limits before a request reaches
/// Jackdaw (<see cref="ApplyTo"/>); the body limits are per route (<see cref="RequestContext.LimitBody"/>),
/// under <see cref="ServerOptions.MaxRequestBodySize"/> (<c>--max-body-size</c>), the ceiling of
/// every body but a bulk insert's. Where RavenDB has a setting its default is kept; where it leaves
/// one to Kestrel, Kestrel's default is; the others say why they are what they are.
/// </summary>
public sealed class ServerLimits
{
    public const string Section = "Limits";

    private const long MiB = 1024 * 1024;

    /// <summary>Kestrel's request buffer (<c>MaxRequestBufferSize</c>), which must hold the headers whole.</summary>
    private const int MaxHeadersBuffer = 1024 * 1024;

    /// <summary>
    /// A document: <c>PUT /databases/*/docs</c>, and each line of a bulk insert. RavenDB sets no
    /// hard limit but warns from 5 MB (<c>PerformanceHints.Documents.HugeDocumentSizeInMb</c>); 64
    /// MiB is the byte budget of one merged transaction (<c>TransactionMerger.MaxBatchBytes</c>), so
    /// that a document never makes a group commit larger than the merger plans for.
    /// </summary>
    public long MaxDocumentBodySize { get; init; } = 64 * MiB;

    /// <summary>
    /// A batch: <c>bulk_docs</c> (a session's SaveChanges) and <c>multi_get</c>, read whole into
    /// memory before they run. 256 MiB is what every body was allowed before the limits were per route.
    /// </summary>
    public long MaxBatchBodySize { get; init; } = 256 * MiB;

    /// <summary>
    /// A bulk insert's whole stream; null: none (the default). The stream is committed batch by batch
    /// as it arrives and never held whole, each line is bounded as a document, and a slow sender
    /// is cut off by the data rate: a total would only stop the loads bulk insert exists for
    /// (RavenDB sets none either).
    /// </summary>
    public long? MaxBulkInsertBodySize { get; init; }

    /// <summary>
    /// Any other body: queries (their parameters included), index definitions, lists of ids,
    /// subscriptions, admin requests. They are read whole; 16 MiB holds a query with a hundred
    /// thousand ids in its parameters and keeps what a request can make the server buffer small.
    /// </summary>
    public long MaxOtherBodySize { get; init; } = 16 * MiB;

    /// <summary>A request's headers together, in bytes: Kestrel's default (RavenDB keeps it). The request line has its own 8 KiB.</summary>
    public int MaxRequestHeadersTotalSize { get; init; } = 32 * 1024;

    /// <summary>Headers of one request: Kestrel's default (Apache httpd's LimitRequestFields).</summary>
    public int MaxRequestHeaderCount { get; init; } = 100;

    /// <summary>
    /// Open connections (WebSockets included); null: no limit. Kestrel sets none, and neither does
    /// RavenDB; 10,000 is far above what client pools open (a RavenDB client keeps a few per node)
    /// and keeps a flood of connections from taking every file descriptor the database's own files
    /// (journals, index segments) need. Keep it below the process's open-file limit (<c>ulimit -n</c>).
    /// A connection over it is closed at once, unanswered.
    /// </summary>
    public long? MaxConcurrentConnections { get; init; } = 10_000;

    /// <summary>
    /// How long a connection may sit idle between requests, or before its first one (a client that
    /// connects and sends nothing is closed then): Kestrel's default, a little longer than .NET's
    /// HttpClient keeps an idle connection.
    /// </summary>
    public TimeSpan KeepAliveTimeout { get; init; } = TimeSpan.FromSeconds(130);

    /// <summary>How long the server waits for a request's headers once they start (a slowloris is cut off): Kestrel's default.</summary>
    public TimeSpan RequestHeadersTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The least rate, in bytes per second, a request body must arrive at once
    /// <see cref="MinRequestBodyDataRateGracePeriod"/> has passed; a slower sender is cut off with a
    /// 408. Null: no minimum. Kestrel's default, which RavenDB keeps unless <c>Http.MinDataRateBytesPerSec</c> is set.
    /// </summary>
    public int? MinRequestBodyDataRate { get; init; } = 240;

    /// <summary>The time a body gets before <see cref="MinRequestBodyDataRate"/> is enforced: Kestrel's default.</summary>
    public TimeSpan MinRequestBodyDataRateGracePeriod { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// The largest message a client may send over a WebSocket: a changes-feed command (unless
    /// <c>Changes:MaxCommandBytes</c> says otherwise), a subscription worker's acknowledgement, anything
    /// sent to the indexing performance feed. Those are a few dozen bytes; 64 KiB is what both feeds
    /// allowed before it was a setting.
    /// </summary>
    public int MaxWebSocketMessageSize { get; init; } = 64 * 1024;

    /// <summary>
    /// The most results one query answers (<c>/queries</c>, whose answer is built in memory), and the
    /// largest <c>pageSize</c> of a page of documents (<c>/docs</c>, <c>/collections/docs</c>). A query
    /// with no <c>limit</c>, or a larger one, answers at most this many (its <c>TotalResults</c> counts
    /// them all): RavenDB's clients send <c>int.MaxValue</c> for "no limit", which a 400 would break.
    /// A larger <c>pageSize</c> is a 400 naming this setting. The streams, which are how large results
    /// are read, are not limited. 1,048,576 is what a query without a limit answered before it was a
    /// setting.
    /// </summary>
    public int MaxQueryLimit { get; init; } = 1024 * 1024;

    /// <summary>Reads the <c>Limits</c> section; <paramref name="maxRequestBodySize"/> is the ceiling no body limit set here may pass.</summary>
    /// <exception cref="InvalidOperationException">A value that is not valid, or a key that is not a setting, named.</exception>
    public static ServerLimits FromConfiguration(IConfiguration configuration, long maxRequestBodySize)
    {
        var section = configuration.GetSection(Section);
        foreach (var child in section.GetChildren())
        {
            if (!Array.Exists(Keys, key => key.Equals(child.Key, StringComparison.OrdinalIgnoreCase)))
            {
                throw new InvalidOperationException($"{child.Path} is not a setting; the {Section} settings are {string.Join(", ", Keys)} (jackdaw --help lists them).");
            }
        }
        var defaults = new ServerLimits();
        var limits = new ServerLimits
        {
            MaxDocumentBodySize = Bytes(section, nameof(MaxDocumentBodySize), defaults.MaxDocumentBodySize, maxRequestBodySize),
            MaxBatchBodySize = Bytes(section, nameof(MaxBatchBodySize), defaults.MaxBatchBodySize, maxRequestBodySize),
            MaxBulkInsertBodySize = OrNone(section, nameof(MaxBulkInsertBodySize), defaults.MaxBulkInsertBodySize, () => Bytes(section, nameof(MaxBulkInsertBodySize), 0, long.MaxValue)),
            MaxOtherBodySize = Bytes(section, nameof(MaxOtherBodySize), defaults.MaxOtherBodySize, maxRequestBodySize),
            MaxRequestHeadersTotalSize = Count(section, nameof(MaxRequestHeadersTotalSize), defaults.MaxRequestHeadersTotalSize, MaxHeadersBuffer),
            MaxRequestHeaderCount = Count(section, nameof(MaxRequestHeaderCount), defaults.MaxRequestHeaderCount, int.MaxValue),
            MaxConcurrentConnections = OrNone(section, nameof(MaxConcurrentConnections), defaults.MaxConcurrentConnections, () => Count(section, nameof(MaxConcurrentConnections), 0, int.MaxValue)),
            KeepAliveTimeout = Time(section, nameof(KeepAliveTimeout), defaults.KeepAliveTimeout),
            RequestHeadersTimeout = Time(section, nameof(RequestHeadersTimeout), defaults.RequestHeadersTimeout),
            MinRequestBodyDataRate = OrNone(section, nameof(MinRequestBodyDataRate), defaults.MinRequestBodyDataRate, () => Count(section, nameof(MinRequestBodyDataRate), 0, int.MaxValue)),
            MinRequestBodyDataRateGracePeriod = Time(section, nameof(MinRequestBodyDataRateGracePeriod), defaults.MinRequestBodyDataRateGracePeriod),
            MaxWebSocketMessageSize = Count(section, nameof(MaxWebSocketMessageSize), defaults.MaxWebSocketMessageSize, int.MaxValue),
            MaxQueryLimit = Count(section, nameof(MaxQueryLimit), defaults.MaxQueryLimit, int.MaxValue),
        };
        // Kestrel checks the rate once a second: a grace of a second or less would cut off every body at once.
        if (limits.MinRequestBodyDataRateGracePeriod <= TimeSpan.FromSeconds(1))
        {
            throw Refuse(section, nameof(MinRequestBodyDataRateGracePeriod), "is not more than 1 second (Kestrel checks the rate once a second)", HowToSet($"{Section}:{nameof(MinRequestBodyDataRateGracePeriod)}"));
        }
        return limits;
    }

    /// <summary>Sets Kestrel's limits: the connection, header, time and rate limits, and the body limit of every route that sets none of its own.</summary>
    public void ApplyTo(KestrelServerLimits kestrel, long maxRequestBodySize)
    {
        kestrel.MaxRequestBodySize = BodyLimit(RequestBodyKind.Other, maxRequestBodySize).Bytes;
        kestrel.MaxRequestHeadersTotalSize = MaxRequestHeadersTotalSize;
        kestrel.MaxRequestHeaderCount = MaxRequestHeaderCount;
        kestrel.MaxConcurrentConnections = MaxConcurrentConnections;
        kestrel.KeepAliveTimeout = KeepAliveTimeout;
        kestrel.RequestHeadersTimeout = RequestHeadersTimeout;
        kestrel.MinRequestBodyDataRate = MinRequestBodyDataRate is { } rate ? new MinDataRate(rate, MinRequestBodyDataRateGracePeriod) : null;
    }

    /// <summary>
    /// The largest body of <paramref name="kind"/> (null: none) and the setting that decides it: the
    /// route's own, or <c>MaxRequestBodySize</c> when that ceiling is lower (a bulk insert's stream is under no ceiling).
    /// </summary>
    public (long? Bytes, string Setting) BodyLimit(RequestBodyKind kind, long maxRequestBodySize)
    {
        var (bytes, key) = kind switch
        {
            RequestBodyKind.Document => (MaxDocumentBodySize, nameof(MaxDocumentBodySize)),
            RequestBodyKind.Batch => (MaxBatchBodySize, nameof(MaxBatchBodySize)),
            RequestBodyKind.BulkInsert => (MaxBulkInsertBodySize, nameof(MaxBulkInsertBodySize)),
            _ => (MaxOtherBodySize, nameof(MaxOtherBodySize)),
        };
        if (kind != RequestBodyKind.BulkInsert && maxRequestBodySize < bytes)
        {
            return (maxRequestBodySize, "MaxRequestBodySize");
        }
        return (bytes, $"{Section}:{key}");
    }

    /// <summary>
    /// Kestrel's own errors for a body over its limit (413) or arriving too slowly (408) name neither
    /// the setting nor what to do: the same error, with a message that does. Any other exception is returned as it is.
    /// </summary>
    public Exception Explain(Exception exception, RequestBodyKind kind, long maxRequestBodySize)
    {
        if (exception is not BadHttpRequestException bad)
        {
            return exception;
        }
        switch (bad.StatusCode)
        {
            case StatusCodes.Status413PayloadTooLarge:
                var (bytes, setting) = BodyLimit(kind, maxRequestBodySize);
                return new BadHttpRequestException(
                    $"The request body is over {Number(bytes ?? 0)} bytes, the largest {What(kind, setting)} allowed ({setting}; {HowToSet(setting)}).",
                    bad.StatusCode,
                    bad);
            case StatusCodes.Status408RequestTimeout when MinRequestBodyDataRate is { } rate:
                var key = $"{Section}:{nameof(MinRequestBodyDataRate)}";
                return new BadHttpRequestException(
                    $"The request body arrived slower than {Number(rate)} bytes per second after a grace of {MinRequestBodyDataRateGracePeriod.TotalSeconds:0.###} s, the least {key} allows; the request was cut off ({HowToSet(key)}, 'none' for no minimum).",
                    bad.StatusCode,
                    bad);
            default:
                return exception;
        }
    }

    /// <summary>
    /// The command-line options of this section, with their defaults (<see cref="CommandLineOption.All"/>).
    /// <see cref="Keys"/> lists the same settings, and <see cref="FromConfiguration"/> reads them.
    /// </summary>
    internal static IEnumerable<CommandLineOption> CommandLineOptions()
    {
        var defaults = new ServerLimits();
        return
        [
            Option(nameof(MaxDocumentBodySize), "BYTES", "The largest document sent alone (PUT docs) or as a bulk insert's line.", Size(defaults.MaxDocumentBodySize), "1048576"),
            Option(nameof(MaxBatchBodySize), "BYTES", "The largest batch body (bulk_docs, multi_get), read whole.", Size(defaults.MaxBatchBodySize), "67108864"),
            Option(nameof(MaxBulkInsertBodySize), "BYTES", "The largest bulk insert stream; none: no limit.", "none", "none"),
            Option(nameof(MaxOtherBodySize), "BYTES", "The largest body of any other request (queries, index definitions...).", Size(defaults.MaxOtherBodySize), "1048576"),
            Option(nameof(MaxRequestHeadersTotalSize), "BYTES", "The largest total size of a request's headers (at most 1 MiB); over it: 431.", Plain(defaults.MaxRequestHeadersTotalSize), "65536"),
            Option(nameof(MaxRequestHeaderCount), "N", "The most headers a request may have; over it: 431.", Plain(defaults.MaxRequestHeaderCount), "200"),
            Option(nameof(MaxConcurrentConnections), "N", "The most open connections (WebSockets included); more are closed unanswered;\nnone: no limit. Keep it under the open-file limit (ulimit -n).", Plain(defaults.MaxConcurrentConnections!.Value), "1000"),
            Option(nameof(KeepAliveTimeout), "TIME", "How long a connection may idle, also before its first request.", Time(defaults.KeepAliveTimeout), "00:01:00"),
            Option(nameof(RequestHeadersTimeout), "TIME", "How long the server waits for a request's headers.", Time(defaults.RequestHeadersTimeout), "00:00:10"),
            Option(nameof(MinRequestBodyDataRate), "BYTES/S", "The least rate a body must arrive at after the grace period, or it is cut off\n(408); none: no minimum.", Plain(defaults.MinRequestBodyDataRate!.Value), "1024"),
            Option(nameof(MinRequestBodyDataRateGracePeriod), "TIME", "The time a body gets before its rate is checked (more than 1 second).", Time(defaults.MinRequestBodyDataRateGracePeriod), "00:00:10"),
            Option(nameof(MaxWebSocketMessageSize), "BYTES", "The largest message a WebSocket client may send (changes feed, subscriptions).", Plain(defaults.MaxWebSocketMessageSize), "16384"),
            Option(nameof(MaxQueryLimit), "N", "The most results of a query (/queries), whatever limit it asks, and the largest\npageSize of a page (/docs; over it: 400); the streams are not limited.", Plain(defaults.MaxQueryLimit), "10000"),
        ];
    }

    /// <summary>The keys of this section.</summary>
    private static readonly string[] Keys =
    [
        nameof(MaxDocumentBodySize), nameof(MaxBatchBodySize), nameof(MaxBulkInsertBodySize), nameof(MaxOtherBodySize),
        nameof(MaxRequestHeadersTotalSize), nameof(MaxRequestHeaderCount), nameof(MaxConcurrentConnections),
        nameof(KeepAliveTimeout), nameof(RequestHeadersTimeout), nameof(MinRequestBodyDataRate), nameof(MinRequestBodyDataRateGracePeriod),
        nameof(MaxWebSocketMessageSize), nameof(MaxQueryLimit),
    ];

    private static CommandLineOption Option(string key, string value, string description, string defaultValue, string example) =>
        new($"--{Section}:{key}", $"{Section}:{key}", value, description, defaultValue, Environment($"{Section}:{key}"), example);

    private static string Environment(string setting) => "JACKDAW_" + setting.Replace(":", "__", StringComparison.Ordinal).ToUpperInvariant();

    /// <summary>"set it with --Limits:MaxQueryLimit or JACKDAW_LIMITS__MAXQUERYLIMIT", from the option that sets <paramref name="setting"/>.</summary>
    private static string HowToSet(string setting) =>
        CommandLineOption.All.FirstOrDefault(option => option.Key == setting) is { } option
            ? $"set it with {option.Name} or {option.Environment}"
            : $"set it with {Environment(setting)}";

    private static string What(RequestBodyKind kind, string setting) => setting == "MaxRequestBodySize"
        ? "request body"
        : kind switch
        {
            RequestBodyKind.Document => "document",
            RequestBodyKind.Batch => "batch",
            RequestBodyKind.BulkInsert => "bulk insert",
            _ => "body of this request",
        };

    private static long Bytes(IConfigurationSection section, string key, long fallback, long ceiling)
    {
        if (section[key] is not { Length: > 0 } text)
        {
            return fallback;
        }
        if (!long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) || value <= 0)
        {
            throw Refuse(section, key, "is not a positive number of bytes", HowToSet($"{Section}:{key}"));
        }
        if (value > ceiling)
        {
            throw Refuse(section, key, $"is over MaxRequestBodySize ({Number(ceiling)}), the ceiling of every request body but a bulk insert's", "set it lower, or raise --max-body-size too");
        }
        return value;
    }

    private static int Count(IConfigurationSection section, string key, int fallback, int max)
    {
        if (section[key] is not { Length: > 0 } text)
        {
            return fallback;
        }
        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) || value <= 0 || value > max)
        {
            throw Refuse(section, key, max == int.MaxValue ? "is not a positive whole number" : $"is not a whole number from 1 to {Number(max)}", HowToSet($"{Section}:{key}"));
        }
        return value;
    }

    /// <summary>A value that may be <c>none</c> (no limit); anything else is read by <paramref name="parse"/>.</summary>
    private static T? OrNone<T>(IConfigurationSection section, string key, T? fallback, Func<T> parse)
        where T : struct
    {
        if (section[key] is not { Length: > 0 } text)
        {
            return fallback;
        }
        return text.Equals("none", StringComparison.OrdinalIgnoreCase) ? null : parse();
    }

    private static TimeSpan Time(IConfigurationSection section, string key, TimeSpan fallback) =>
        ServerOptions.PositiveTime(section, key, fallback);

    private static InvalidOperationException Refuse(IConfigurationSection section, string key, string problem, string fix) =>
        new($"{section.Path}:{key} '{section[key]}' {problem}; {fix}.");

    /// <summary>A number as a message shows it: 1,048,576.</summary>
    private static string Number(long value) => value.ToString("N0", CultureInfo.InvariantCulture);

    /// <summary>A number as help shows it, to be copied: 1048576.</summary>
    private static string Plain(long value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Size(long bytes) => $"{Plain(bytes)} ({bytes / MiB} MiB)";

    private static string Time(TimeSpan value) => value.ToString(@"hh\:mm\:ss", CultureInfo.InvariantCulture);
}
