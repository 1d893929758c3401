namespace Jackdaw.Client;

/// <summary>
/// Brings every document of the database (or of some collections) back to its state at a point in
/// time, from its revisions (<c>POST /databases/{db}/revisions/revert</c>, RavenDB's
/// <c>RevertRevisionsOperation</c>): a document changed since is written again as its revision of
/// then was; one created since is deleted. A long-running operation:
/// <c>var operation = await store.Maintenance.SendAsync(new RevertRevisionsOperation(request));
/// var result = await operation.WaitForCompletionAsync&lt;RevertResult&gt;();</c>
/// </summary>
public sealed class RevertRevisionsOperation : IMaintenanceOperation<OperationIdResult>
{
    private readonly RevertRevisionsRequest _request;

    public RevertRevisionsOperation(DateTime time, long window)
        : this(new RevertRevisionsRequest { Time = time, WindowInSec = window })
    {
    }

    public RevertRevisionsOperation(RevertRevisionsRequest request)
    {
        _request = request ?? throw new ArgumentNullException(nameof(request));
        if (request.WindowInSec < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(request), $"WindowInSec is {request.WindowInSec}; it is a number of seconds, 0 or more.");
        }
    }

    async Task<OperationIdResult> IMaintenanceOperation<OperationIdResult>.ExecuteAsync(OperationContext context, CancellationToken token)
    {
        var body = new Dictionary<string, object?>
        {
            ["Time"] = _request.Time.Kind == DateTimeKind.Local ? _request.Time.ToUniversalTime() : DateTime.SpecifyKind(_request.Time, DateTimeKind.Utc),
            ["WindowInSec"] = _request.WindowInSec,
            ["Collections"] = _request.Collections is { Length: > 0 } collections ? collections : null,
        };
        var bytes = System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(body, Json.WireJson.Options);
        using var response = await context.Executor.SendAsync(HttpMethod.Post, context.DatabasePath + "/revisions/revert", bytes, token).ConfigureAwait(false);
        return await MaintenanceOperations.ReadOperationIdAsync(response, "POST revisions/revert", token).ConfigureAwait(false);
    }
}
