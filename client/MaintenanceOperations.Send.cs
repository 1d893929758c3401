using System.Text.Json;

namespace Jackdaw.Client;

// Operation objects, RavenDB's way: store.Maintenance.SendAsync(new ConfigureRevisionsOperation(...)).
public sealed partial class MaintenanceOperations
{
    /// <summary>Runs an administrative operation on the database and answers its result.</summary>
    public Task<TResult> SendAsync<TResult>(IMaintenanceOperation<TResult> operation, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(operation);
        return operation.ExecuteAsync(Context(), token);
    }

    /// <summary>Runs an administrative operation that answers nothing.</summary>
    public Task SendAsync(IMaintenanceOperation operation, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(operation);
        return operation.ExecuteAsync(Context(), token);
    }

    /// <summary>
    /// Starts a long-running operation (<see cref="RevertRevisionsOperation"/>) and answers it at
    /// once: <see cref="Operation.WaitForCompletionAsync(TimeSpan?, CancellationToken)"/> waits for its end.
    /// </summary>
    public async Task<Operation> SendAsync(IMaintenanceOperation<OperationIdResult> operation, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(operation);
        var context = Context();
        var started = await operation.ExecuteAsync(context, token).ConfigureAwait(false);
        return new Operation(_executor, context.DatabasePath, started);
    }

    private OperationContext Context() => new(_executor, _conventions, IndexesPath(""));

    /// <summary>Reads <c>{"OperationId": n}</c>, the answer of a request that started an operation.</summary>
    internal static async Task<OperationIdResult> ReadOperationIdAsync(HttpResponseMessage response, string what, CancellationToken token)
    {
        await using var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
        using var json = await JsonDocument.ParseAsync(stream, default, token).ConfigureAwait(false);
        if (!json.RootElement.TryGetProperty("OperationId", out var id) || !id.TryGetInt64(out var value))
        {
            throw new JackdawException($"{what} answered without an \"OperationId\": {json.RootElement.GetRawText()}");
        }

        var tag = json.RootElement.TryGetProperty("OperationNodeTag", out var node) && node.ValueKind == JsonValueKind.String ? node.GetString() : null;
        return new OperationIdResult { OperationId = value, OperationNodeTag = tag };
    }
}
