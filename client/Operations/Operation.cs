using System.Net;
using System.Text.Json;
using Jackdaw.Client.Http;

namespace Jackdaw.Client;

/// <summary>
/// A long-running operation on the server (a patch or delete by query), followed by its id:
/// <see cref="WaitForCompletionAsync"/> polls <c>operations/state</c> until it ends,
/// <see cref="KillAsync"/> cancels it (RavenDB's <c>Operation</c>). Both go to the node that runs
/// it (the answer's <c>OperationNodeTag</c>), wherever the database's other requests go: another
/// node has no such operation.
/// </summary>
public sealed class Operation
{
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(100);
    private readonly RequestExecutor _executor;
    private readonly string _databasePath;
    private readonly string? _nodeTag;

    internal Operation(RequestExecutor executor, string databasePath, OperationIdResult started)
    {
        _executor = executor;
        _databasePath = databasePath;
        Id = started.OperationId;
        _nodeTag = started.OperationNodeTag;
    }

    public long Id { get; }

    /// <summary>The operation's state now.</summary>
    public async Task<OperationState> GetStateAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendToNodeAsync(HttpMethod.Get, $"{_databasePath}/operations/state?id={Id}", _nodeTag, token).ConfigureAwait(false);
        await using var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
        using var json = await JsonDocument.ParseAsync(stream, default, token).ConfigureAwait(false);
        return OperationState.Read(json.RootElement);
    }

    /// <summary>Waits until the operation completed and answers its result.</summary>
    /// <exception cref="JackdawException">It failed (the server's error type and message) or was killed.</exception>
    /// <exception cref="TimeoutException">It had not ended within <paramref name="timeout"/>.</exception>
    public async Task<OperationResult> WaitForCompletionAsync(TimeSpan? timeout = null, CancellationToken token = default)
    {
        var deadline = timeout is { } limit ? DateTime.UtcNow + limit : DateTime.MaxValue;
        while (true)
        {
            var state = await GetStateAsync(token).ConfigureAwait(false);
            switch (state.Status)
            {
                case OperationStatus.Completed:
                    return state.Result ?? new OperationResult();
                case OperationStatus.Faulted or OperationStatus.Canceled:
                    throw new JackdawException(
                        $"Operation {Id} {(state.Status == OperationStatus.Canceled ? "was cancelled" : "failed")}: {state.Result?.Message}",
                        state.Result?.StatusCode is { } status ? (HttpStatusCode)status : null,
                        state.Result?.ErrorType);
            }
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Operation {Id} had not ended after {timeout}; it goes on on the server.");
            }
            await Task.Delay(PollInterval, token).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// As <see cref="WaitForCompletionAsync(TimeSpan?, CancellationToken)"/>, the result read as the
    /// operation's own kind (<see cref="RevertResult"/> for a <see cref="RevertRevisionsOperation"/>),
    /// with the server's names.
    /// </summary>
    public async Task<TResult> WaitForCompletionAsync<TResult>(TimeSpan? timeout = null, CancellationToken token = default)
        where TResult : class
    {
        var result = await WaitForCompletionAsync(timeout, token).ConfigureAwait(false);
        if (result.Raw.ValueKind != JsonValueKind.Object)
        {
            throw new JackdawException($"Operation {Id} completed without a result to read as a {typeof(TResult).Name}.");
        }

        return result.Raw.Deserialize<TResult>(Json.WireJson.Options) ?? throw new JackdawException($"Operation {Id}'s result read as a null {typeof(TResult).Name}.");
    }

    /// <summary>Asks the server to cancel the operation; the batches it committed stay.</summary>
    public async Task KillAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendToNodeAsync(HttpMethod.Post, $"{_databasePath}/operations/kill?id={Id}", _nodeTag, token).ConfigureAwait(false);
    }
}
