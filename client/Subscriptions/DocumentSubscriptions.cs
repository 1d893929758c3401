using System.Buffers;
using System.Linq.Expressions;
using System.Text.Json;
using Jackdaw.Client.Json;
using Jackdaw.Client.Subscriptions;

namespace Jackdaw.Client;

/// <summary>
/// <c>store.Subscriptions</c>: data subscriptions of <see cref="DocumentStore.Database"/> (or the
/// database given), with RavenDB's names. Definitions go through the HTTP routes
/// (<c>/databases/{db}/subscriptions</c>); workers connect over a WebSocket on the same port.
/// </summary>
public sealed class DocumentSubscriptions
{
    private readonly DocumentStore _store;

    internal DocumentSubscriptions(DocumentStore store)
    {
        _store = store;
    }

    /// <summary>
    /// Creates a subscription to the documents of <typeparamref name="T"/>'s collection that match
    /// <paramref name="predicate"/> (translated as queries translate a <c>Where</c>, values written
    /// into the RQL). <paramref name="options"/> gives the name and the start; its <c>Query</c> is used
    /// only without a predicate. Returns the subscription's name.
    /// </summary>
    /// <exception cref="NotSupportedException">The predicate has no RQL form.</exception>
    /// <exception cref="SubscriptionAlreadyExistsException">The name is taken.</exception>
    public Task<string> CreateAsync<T>(Expression<Func<T, bool>>? predicate = null, SubscriptionCreationOptions? options = null, string? database = null, CancellationToken token = default)
        where T : class
    {
        var query = predicate is null && !string.IsNullOrWhiteSpace(options?.Query)
            ? options.Query
            : SubscriptionRql.For(predicate, _store.Conventions);
        return CreateAsync(new SubscriptionCreationOptions { Name = options?.Name, Query = query, ChangeVector = options?.ChangeVector }, database, token);
    }

    /// <summary>Creates a subscription from RQL (<see cref="SubscriptionCreationOptions.Query"/>). Returns its name.</summary>
    /// <exception cref="InvalidQueryException">The server cannot use the query for a subscription.</exception>
    /// <exception cref="SubscriptionAlreadyExistsException">The name is taken.</exception>
    public async Task<string> CreateAsync(SubscriptionCreationOptions options, string? database = null, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        if (string.IsNullOrWhiteSpace(options.Query))
        {
            throw new ArgumentException("SubscriptionCreationOptions.Query is required: RQL such as \"from Orders where Freight > 10\".", nameof(options));
        }

        var body = new ArrayBufferWriter<byte>(256);
        using (var writer = new Utf8JsonWriter(body, new JsonWriterOptions { Encoder = WireJson.Options.Encoder }))
        {
            writer.WriteStartObject();
            if (options.Name is not null)
            {
                writer.WriteString("Name", options.Name);
            }

            writer.WriteString("Query", options.Query);
            writer.WriteString("ChangeVector", options.ChangeVector ?? "BeginningOfTime");
            writer.WriteEndObject();
        }

        using var json = await SendAsync(HttpMethod.Put, database, "", body.WrittenMemory, token).ConfigureAwait(false);
        return json!.RootElement.TryGetProperty("Name", out var name) && name.ValueKind == JsonValueKind.String
            ? name.GetString()!
            : throw new JackdawException("PUT /subscriptions answered without the subscription's \"Name\".");
    }

    /// <summary>The database's subscriptions in the order they were created, <paramref name="take"/> of them after <paramref name="start"/>.</summary>
    public async Task<List<SubscriptionState>> GetSubscriptionsAsync(int start = 0, int take = int.MaxValue, string? database = null, CancellationToken token = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(start);
        ArgumentOutOfRangeException.ThrowIfNegative(take);
        using var json = await SendAsync(HttpMethod.Get, database, "", null, token).ConfigureAwait(false);
        return [.. ReadStates(json!).Skip(start).Take(take)];
    }

    /// <summary>One subscription's state: position, workers, pending documents.</summary>
    /// <exception cref="SubscriptionDoesNotExistException">No subscription has that name.</exception>
    public async Task<SubscriptionState> GetSubscriptionStateAsync(string name, string? database = null, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        using var json = await SendAsync(HttpMethod.Get, database, "?name=" + Uri.EscapeDataString(name), null, token).ConfigureAwait(false);
        return ReadStates(json!).FirstOrDefault() ?? throw new SubscriptionDoesNotExistException($"Subscription '{name}' was not in the server's answer.");
    }

    /// <summary>Deletes a subscription; its workers stop with <see cref="SubscriptionClosedException"/>.</summary>
    public async Task DeleteAsync(string name, string? database = null, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        using var json = await SendAsync(HttpMethod.Delete, database, "?name=" + Uri.EscapeDataString(name), null, token).ConfigureAwait(false);
    }

    /// <summary>Disables a subscription (kept across restarts): its workers stop and new ones are refused.</summary>
    public Task DisableAsync(string name, string? database = null, CancellationToken token = default) => PostAsync("/disable", name, database, token);

    public Task EnableAsync(string name, string? database = null, CancellationToken token = default) => PostAsync("/enable", name, database, token);

    /// <summary>Closes the connections of the subscription's workers; they reconnect and go on from the acknowledged position.</summary>
    public Task DropConnectionAsync(string name, string? database = null, CancellationToken token = default) => PostAsync("/drop", name, database, token);

    /// <summary>A worker for the subscription; nothing connects until <see cref="SubscriptionWorker{T}.Run(Func{SubscriptionBatch{T}, Task}, CancellationToken)"/>.</summary>
    public SubscriptionWorker<T> GetSubscriptionWorker<T>(SubscriptionWorkerOptions options, string? database = null)
        where T : class
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThan(options.MaxDocsPerBatch, 1, nameof(options));
        return new SubscriptionWorker<T>(_store, _store.ResolveDatabase(database), options);
    }

    public SubscriptionWorker<T> GetSubscriptionWorker<T>(string subscriptionName, string? database = null)
        where T : class => GetSubscriptionWorker<T>(new SubscriptionWorkerOptions(subscriptionName), database);

    private async Task PostAsync(string action, string name, string? database, CancellationToken token)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        using var json = await SendAsync(HttpMethod.Post, database, action + "?name=" + Uri.EscapeDataString(name), null, token).ConfigureAwait(false);
    }

    /// <summary>Sends a request to <c>/databases/{db}/subscriptions{suffix}</c>; the answer's JSON, or null for an empty one.</summary>
    private async Task<JsonDocument?> SendAsync(HttpMethod method, string? database, string suffix, ReadOnlyMemory<byte>? body, CancellationToken token)
    {
        var path = DocumentStore.DatabasePath(_store.ResolveDatabase(database)) + "/subscriptions" + suffix;
        try
        {
            using var response = await _store.Executor.SendAsync(method, path, body, token).ConfigureAwait(false);
            var bytes = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
            return bytes.Length == 0 ? null : JsonDocument.Parse(bytes);
        }
        catch (JackdawException e) when (e.ServerErrorType == SubscriptionErrorTypes.DoesNotExist)
        {
            throw new SubscriptionDoesNotExistException(e.Message, e.StatusCode);
        }
        catch (JackdawException e) when (e.ServerErrorType == SubscriptionErrorTypes.AlreadyExists)
        {
            throw new SubscriptionAlreadyExistsException(e.Message, e.StatusCode);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"{method} {path} answered with something that is not JSON: {e.Message}", e);
        }
    }

    private static IEnumerable<SubscriptionState> ReadStates(JsonDocument json) =>
        json.RootElement.TryGetProperty("Results", out var results) && results.ValueKind == JsonValueKind.Array
            ? results.Deserialize<List<SubscriptionState>>(WireJson.Options) ?? []
            : throw new JackdawException("GET /subscriptions answered without a \"Results\" array.");
}
