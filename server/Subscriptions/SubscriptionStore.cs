using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Rql;
using Microsoft.Extensions.Logging;
using NonBlocking;

namespace Jackdaw.Server.Subscriptions;

/// <summary>How a worker takes a subscription (RavenDB's strategies).</summary>
public enum SubscriptionStrategy : byte
{
    /// <summary>Connect only when no worker holds it (else <c>SubscriptionInUseException</c>).</summary>
    OpenIfFree,

    /// <summary>Close the worker that holds it and take it.</summary>
    TakeOver,

    /// <summary>Wait until the worker that holds it goes.</summary>
    WaitForFree,

    /// <summary>Share it with other concurrent workers: each batch goes to one of them.</summary>
    Concurrent,
}

/// <summary>
/// The subscriptions of one database (a database component): definitions and acknowledged
/// positions in the database's <c>Subscriptions</c> tree, written through the merger (durable before
/// a worker is told), and the runtime of each, its <see cref="SubscriptionCoordinator"/>
/// (connected workers, batches in flight).
/// </summary>
public sealed partial class SubscriptionStore : IAsyncDisposable
{
    public const string TreeName = "Subscriptions";

    private readonly DocumentDatabase _database;
    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<string, SubscriptionCoordinator> _subscriptions = new(StringComparer.OrdinalIgnoreCase);
    private readonly SemaphoreSlim _changes = new(1, 1);
    private long _lastId;

    private SubscriptionStore(DocumentDatabase database, ILoggerFactory loggerFactory, ISubscriptionCluster? cluster)
    {
        _database = database;
        _cluster = cluster;
        _logger = loggerFactory.CreateLogger($"Jackdaw.Subscriptions.{database.Name}");
        database.RegisterTrees("Subscriptions", TreeName);
        JsonRecords.ReadAll(database, TreeName, json =>
            {
                var record = SubscriptionRecord.FromJson(json);
                _subscriptions[record.Name] = new SubscriptionCoordinator(this, record, Parse(record.Query));
                _lastId = Math.Max(_lastId, record.Id);
            },
            e => _logger.LogError(e, "A subscription of database {Database} cannot be read; it is skipped", database.Name));
        RefreshFromCluster();
    }

    /// <param name="cluster">The cluster that keeps a clustered database's subscriptions; null: every database keeps its own.</param>
    public static Func<DocumentDatabase, IAsyncDisposable> Component(ILoggerFactory loggerFactory, ISubscriptionCluster? cluster = null) =>
        database => new SubscriptionStore(database, loggerFactory, cluster);

    public static SubscriptionStore Of(DocumentDatabase database) =>
        database.GetComponent<SubscriptionStore>() ?? throw new InvalidOperationException($"Database '{database.Name}' was opened without subscriptions.");

    internal DocumentDatabase Database => _database;

    /// <summary>The subscriptions' log (their connections log there too).</summary>
    public ILogger Logger => _logger;

    /// <summary>How long a worker may take to acknowledge a batch before it is dropped and the batch goes to the next one.</summary>
    public TimeSpan AckTimeout { get; set; } = TimeSpan.FromMinutes(1);

    public IReadOnlyCollection<SubscriptionCoordinator> Subscriptions => _subscriptions.Values.OrderBy(s => s.Record.Id).ToList();

    public SubscriptionCoordinator Get(string name) =>
        _subscriptions.TryGetValue(name, out var subscription) ? subscription : throw new SubscriptionDoesNotExistException(name);

    /// <summary>The parsed query of a subscription: <c>from Collection</c> (or <c>@all_docs</c>), an optional where, select, include.</summary>
    /// <exception cref="InvalidQueryException">Not such a query.</exception>
    public static RqlQuery Parse(string query)
    {
        var parsed = RqlParser.Parse(query);
        if (parsed.From.IsIndex)
        {
            throw new InvalidQueryException(query, parsed.From.Position, "a subscription reads a collection, not an index: write 'from Orders where ...'.");
        }
        if (parsed.OrderBy.Count > 0)
        {
            throw new InvalidQueryException(query, parsed.OrderBy[0].Position, "a subscription delivers documents in the order they change; 'order by' has no meaning here.");
        }
        if (parsed.Filter is not null)
        {
            throw new InvalidQueryException(query, parsed.Filter.Position, "a subscription tests its 'where' on each document that changes; write the condition there instead of in 'filter'.");
        }
        if (parsed.IncludeTimings)
        {
            throw new InvalidQueryException(query, parsed.From.Position, "a subscription has no timings to include; remove 'include timings()'.");
        }
        if (parsed.Limit is not null || parsed.Offset is not null)
        {
            throw new InvalidQueryException(query, (parsed.Limit ?? parsed.Offset)!.Position, "a subscription delivers every matching document; 'limit' and 'offset' have no meaning here.");
        }
        // Values must not come from $parameters (a subscription has none); evaluating once finds them.
        new RqlEvaluator(query).Matches(parsed.Where, "", EmptyDocument.Value);
        return parsed;
    }

    private static class EmptyDocument
    {
        public static readonly byte[] Value = BuildEmpty();

        private static byte[] BuildEmpty()
        {
            using var context = new Jackdaw.Storage.Blittable.JsonOperationContext();
            return context.Parse("{}"u8, Jackdaw.Storage.Blittable.BlittableMode.Disk).ToArray();
        }
    }

    /// <summary>
    /// Creates a subscription. <paramref name="changeVector"/>: <c>BeginningOfTime</c> (or null),
    /// <c>LastDocument</c> (only what changes from now), an etag, or a change vector <c>A:{etag}-...</c>.
    /// </summary>
    public async Task<SubscriptionRecord> CreateAsync(string? name, string query, string? changeVector)
    {
        Parse(query);
        if (IsClustered)
        {
            return await CreateInClusterAsync(name, query, changeVector).ConfigureAwait(false);
        }
        // A member that has not loaded this database's record yet would make a subscription of its
        // own, which the cluster's of the same name would shadow once loaded: retry shortly.
        if (_cluster?.IsLoading(_database.Name) == true)
        {
            throw new DatabaseUnavailableException(_database.Name, "this node is still loading the cluster's state (its subscriptions are kept there).");
        }
        var start = changeVector switch
        {
            null or "" or "BeginningOfTime" => 0,
            "LastDocument" => _database.LastEtag,
            _ when long.TryParse(changeVector, out var etag) && etag >= 0 => etag,
            _ when ChangeVectors.TryParse(changeVector, out var etag, out _) => etag,
            _ => throw new BadRequestException($"ChangeVector '{changeVector}' is not BeginningOfTime, LastDocument, an etag or a change vector such as A:12-..."),
        };
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            var id = ++_lastId;
            name = string.IsNullOrWhiteSpace(name) ? id.ToString(System.Globalization.CultureInfo.InvariantCulture) : name.Trim();
            if (name.Length > 256 || name.Any(char.IsControl))
            {
                throw new BadRequestException("A subscription name has at most 256 characters and no control characters.");
            }
            if (_subscriptions.ContainsKey(name))
            {
                throw new SubscriptionAlreadyExistsException(name);
            }
            var record = new SubscriptionRecord(id, name, query, start, false, DateTime.UtcNow, null, null);
            await StoreAsync(record).ConfigureAwait(false);
            _subscriptions[name] = new SubscriptionCoordinator(this, record, Parse(query));
            _logger.LogInformation("Subscription {Subscription} of database {Database} created from etag {Etag}", name, _database.Name, start);
            return record;
        }
        finally
        {
            _changes.Release();
        }
    }

    public async Task DeleteAsync(string name)
    {
        if (Get(name).Cluster is not null)
        {
            await ProposeAsync(new SubscriptionProposal(SubscriptionProposalKind.Delete, _database.Name, Get(name).Record.Name)).ConfigureAwait(false);
            return;
        }
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            var subscription = Get(name);
            // In line with its acknowledgements' stores: one that was under way when the delete
            // came cannot put the record back afterwards (it would come back at the next open).
            await subscription.DeleteAsync(() => _database.EnqueueAsync(new JsonRecords.StoreCommand(TreeName, subscription.Record.Name, null))).ConfigureAwait(false);
            _subscriptions.TryRemove(subscription.Record.Name, out _);
            subscription.CloseAll("the subscription was deleted");
        }
        finally
        {
            _changes.Release();
        }
    }

    public async Task SetDisabledAsync(string name, bool disabled)
    {
        var subscription = Get(name);
        if (subscription.Cluster is not null)
        {
            // Every node closes its workers when it applies the change.
            await ProposeAsync(new SubscriptionProposal(SubscriptionProposalKind.SetDisabled, _database.Name, subscription.Record.Name) { Disabled = disabled }).ConfigureAwait(false);
            return;
        }
        await subscription.UpdateAsync(r => r with { Disabled = disabled }).ConfigureAwait(false);
        if (disabled)
        {
            subscription.CloseAll("the subscription was disabled");
        }
    }

    internal Task StoreAsync(SubscriptionRecord record) => _database.EnqueueAsync(new JsonRecords.StoreCommand(TreeName, record.Name, record.ToJson()));

    public ValueTask DisposeAsync()
    {
        foreach (var subscription in _subscriptions.Values)
        {
            subscription.CloseAll("the database is closing", canReconnect: true);
        }
        return ValueTask.CompletedTask;
    }
}
