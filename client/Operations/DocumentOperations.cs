using System.Net;
using System.Text.Json;
using Jackdaw.Client.Http;
using Jackdaw.Client.Json;

namespace Jackdaw.Client;

/// <summary>
/// Operations on the documents of <see cref="DocumentStore.Database"/> outside a session: a
/// JavaScript patch of one document, patch and delete by query (RavenDB's <c>PatchOperation</c>,
/// <c>PatchByQueryOperation</c>, <c>DeleteByQueryOperation</c>).
/// </summary>
public sealed class DocumentOperations
{
    private readonly RequestExecutor _executor;
    private readonly DocumentConventions _conventions;
    private readonly string? _database;

    internal DocumentOperations(RequestExecutor executor, DocumentConventions conventions, string? database)
    {
        _executor = executor;
        _conventions = conventions;
        _database = database;
    }

    /// <summary>The same operations on another database.</summary>
    public DocumentOperations ForDatabase(string database) => new(_executor, _conventions, database);

    /// <summary>Runs an operation object (<see cref="PutAttachmentOperation"/>, <see cref="GetAttachmentOperation"/>, ...) and answers its result.</summary>
    public Task<TResult> SendAsync<TResult>(IOperation<TResult> operation, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(operation);
        return operation.ExecuteAsync(new OperationContext(_executor, _conventions, DatabasePath()), token);
    }

    /// <summary>Runs an operation object that answers nothing (<see cref="DeleteAttachmentOperation"/>, <see cref="RevertRevisionsByIdOperation"/>).</summary>
    public Task SendAsync(IOperation operation, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(operation);
        return operation.ExecuteAsync(new OperationContext(_executor, _conventions, DatabasePath()), token);
    }

    /// <summary>Patches document <paramref name="id"/> with <paramref name="patch"/>, or creates it with <paramref name="patchIfMissing"/>.</summary>
    /// <param name="test">Run the patch and answer, storing nothing (the answer carries the document before and the script's output).</param>
    /// <exception cref="JackdawException">The script failed (<see cref="JackdawException.ServerErrorType"/> <c>JavaScriptException</c>, its line in the message); nothing was stored.</exception>
    public async Task<PatchResult> PatchAsync(string id, PatchRequest patch, PatchRequest? patchIfMissing = null, bool test = false, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(id);
        ArgumentNullException.ThrowIfNull(patch);
        var body = JsonSerializer.SerializeToUtf8Bytes(new Dictionary<string, object?>
        {
            ["Patch"] = Request(patch),
            ["PatchIfMissing"] = patchIfMissing is null ? null : Request(patchIfMissing),
        }, WireJson.Options);
        try
        {
            using var response = await _executor.SendAsync(HttpMethod.Patch, $"{DatabasePath()}/docs?id={Uri.EscapeDataString(id)}{(test ? "&test=true" : "")}", body, token).ConfigureAwait(false);
            await using var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
            using var json = await JsonDocument.ParseAsync(stream, default, token).ConfigureAwait(false);
            var root = json.RootElement;
            return new PatchResult
            {
                Status = Enum.Parse<PatchStatus>(root.GetProperty("Status").GetString()!),
                ModifiedDocument = Element(root, "ModifiedDocument"),
                ChangeVector = root.TryGetProperty("ChangeVector", out var changeVector) ? changeVector.GetString() : null,
                Debug = Element(root, "Debug"),
                OriginalDocument = Element(root, "OriginalDocument"),
            };
        }
        catch (JackdawException e) when (e.StatusCode == HttpStatusCode.NotFound && e.ServerErrorType is null or ErrorTypes.DocumentDoesNotExist)
        {
            return new PatchResult { Status = PatchStatus.DocumentDoesNotExist };
        }
    }

    /// <summary>
    /// Starts a patch by query, <c>from Orders where Company = $c update { this.Freight += 1 }</c>,
    /// and answers the operation at once; <see cref="Operation.WaitForCompletionAsync"/> waits for it.
    /// </summary>
    public Task<Operation> PatchByQueryAsync(string query, IDictionary<string, object?>? parameters = null, QueryOperationOptions? options = null, CancellationToken token = default) =>
        StartAsync(HttpMethod.Patch, new Dictionary<string, object?> { ["Query"] = Query(query, parameters) }, options, token);

    /// <summary>Starts deleting every document <paramref name="query"/> matches and answers the operation at once.</summary>
    public Task<Operation> DeleteByQueryAsync(string query, IDictionary<string, object?>? parameters = null, QueryOperationOptions? options = null, CancellationToken token = default) =>
        StartAsync(HttpMethod.Delete, Query(query, parameters), options, token);

    private async Task<Operation> StartAsync(HttpMethod method, object body, QueryOperationOptions? options, CancellationToken token)
    {
        var path = DatabasePath();
        using var response = await _executor.SendAsync(method, path + "/queries" + (options ?? new QueryOperationOptions()).ToQueryString(), JsonSerializer.SerializeToUtf8Bytes(body, WireJson.Options), token).ConfigureAwait(false);
        var started = await MaintenanceOperations.ReadOperationIdAsync(response, $"{method} queries", token).ConfigureAwait(false);
        return new Operation(_executor, path, started);
    }

    private static Dictionary<string, object?> Request(PatchRequest patch) => new() { ["Script"] = patch.Script, ["Values"] = patch.Values };

    private static Dictionary<string, object?> Query(string query, IDictionary<string, object?>? parameters) => new()
    {
        ["Query"] = query,
        ["QueryParameters"] = parameters ?? new Dictionary<string, object?>(),
    };

    private static JsonElement? Element(JsonElement root, string name) =>
        root.TryGetProperty(name, out var value) && value.ValueKind != JsonValueKind.Null ? value.Clone() : null;

    private string DatabasePath()
    {
        if (string.IsNullOrEmpty(_database))
        {
            throw new InvalidOperationException("Operations on documents need a database: set DocumentStore.Database or use Operations.ForDatabase(name).");
        }
        return DocumentStore.DatabasePath(_database);
    }
}
