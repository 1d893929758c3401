using System.Text.Json;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// RavenDB's client configuration (<c>ReadBalanceBehavior</c>, <c>MaxNumberOfRequestsPerSession</c>,
/// <c>Disabled</c>...): server-wide and per database. In a cluster both are in the state (the
/// database's in its record), committed on the leader; a lone server keeps them in
/// <see cref="LocalClientConfigurations"/>. A database's effective configuration is its own unless
/// it has none or it is disabled, then the server-wide one unless that is disabled (RavenDB's rule);
/// its etag is the newer of the two versions.
/// </summary>
public sealed partial class ClusterNode
{
    private LocalClientConfigurations? _localClientConfigurations;

    private LocalClientConfigurations LocalClientConfigurations => LazyInitializer.EnsureInitialized(
        ref _localClientConfigurations, () => new LocalClientConfigurations(Path.GetDirectoryName(_folder)!));

    /// <summary>The server-wide client configuration, or null.</summary>
    public ClusterClientConfiguration? ServerClientConfiguration => IsClustered ? State.ClientConfiguration : LocalClientConfigurations.Server;

    /// <summary>The configuration clients of <paramref name="database"/> follow (null: none) and its etag (0: none ever set).</summary>
    public (string? Json, long Etag) ClientConfigurationOf(string database)
    {
        var (own, server) = Configurations(database);
        var etag = Math.Max(own?.Etag ?? 0, server?.Etag ?? 0);
        var chosen = (own is null || IsDisabled(own.Json)) && server is not null && !IsDisabled(server.Json) ? server : own;
        return (chosen?.Json, etag);
    }

    /// <summary>The etag of <paramref name="database"/>'s client configuration: a client that sent an older one is told to refresh it (cheap: asked on every request).</summary>
    public long ClientConfigurationEtagOf(string database)
    {
        var (own, server) = Configurations(database);
        return Math.Max(own?.Etag ?? 0, server?.Etag ?? 0);
    }

    private (ClusterClientConfiguration? Own, ClusterClientConfiguration? Server) Configurations(string database)
    {
        if (IsClustered)
        {
            var state = State;
            return (state.Databases.TryGetValue(database, out var record) ? record.ClientConfiguration : null, state.ClientConfiguration);
        }
        var local = LocalClientConfigurations;
        return (local.Of(database), local.Server);
    }

    /// <summary>
    /// Puts <paramref name="json"/> (checked by the caller) server-wide (<paramref name="database"/>
    /// null) or for a database: committed when clustered (on the leader), else stored locally.
    /// Returns the state's etag with it (clustered) or its local version.
    /// </summary>
    public async Task<long> PutClientConfigurationAsync(string? database, string json, string commandId, CancellationToken token)
    {
        if (!IsClustered)
        {
            return LocalClientConfigurations.Put(database, json);
        }
        var name = database is null ? null : RequireRecord(database).Name;
        await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.PutClientConfiguration) { Database = name, ClientConfiguration = json }, token).ConfigureAwait(false);
        return State.Etag;
    }

    /// <summary>At founding: the lone server's configurations go into the state.</summary>
    private async Task RecordLocalClientConfigurationsAsync(IEnumerable<string> databases, CancellationToken token)
    {
        var local = LocalClientConfigurations;
        var puts = new List<(string? Database, ClusterClientConfiguration Configuration)>();
        if (local.Server is { } server && State.ClientConfiguration is null)
        {
            puts.Add((null, server));
        }
        foreach (var database in databases)
        {
            if (local.Of(database) is { } own && State.Databases.TryGetValue(database, out var record) && record.ClientConfiguration is null)
            {
                puts.Add((record.Name, own));
            }
        }
        foreach (var (database, configuration) in puts)
        {
            try
            {
                await ExecuteAsync(new ClusterCommand($"found/client-configuration/{database}", ClusterCommandKind.PutClientConfiguration) { Database = database, ClientConfiguration = configuration.Json }, token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                LogClientConfigurationNotRecorded(_logger, e, database ?? "(server-wide)");
            }
        }
    }

    private static bool IsDisabled(string json)
    {
        try
        {
            using var document = JsonDocument.Parse(json);
            return document.RootElement.TryGetProperty("Disabled", out var disabled) && disabled.ValueKind == JsonValueKind.True;
        }
        catch (JsonException)
        {
            return false;
        }
    }

    [LoggerMessage(EventId = 790, Level = LogLevel.Error, Message = "The client configuration of {Database} could not be put in the cluster's state; it is no longer applied")]
    private static partial void LogClientConfigurationNotRecorded(ILogger logger, Exception exception, string database);
}
