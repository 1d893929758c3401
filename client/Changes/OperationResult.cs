using System.Text.Json;

namespace Jackdaw.Client;

/// <summary>
/// How an operation ended: what it did (RavenDB's <c>BulkOperationResult</c>), or why it failed or
/// was cancelled (its <c>OperationExceptionResult</c>: the error as the server answered it).
/// </summary>
public sealed class OperationResult
{
    /// <summary>The documents it committed (a failed or killed bulk insert keeps those).</summary>
    public long Total { get; init; }

    public string? Message { get; init; }

    /// <summary>The error's type (<c>BadRequestException</c>, …) when it failed; null when it completed.</summary>
    public string? ErrorType { get; init; }

    /// <summary>The status its request was answered with when it failed; null when it completed.</summary>
    public int? StatusCode { get; init; }

    /// <summary>The result as the server wrote it, for <see cref="Operation.WaitForCompletionAsync{TResult}(TimeSpan?, CancellationToken)"/>.</summary>
    internal JsonElement Raw { get; init; }

    internal static OperationResult Read(JsonElement result) => new()
    {
        Raw = result.Clone(),
        Total = result.TryGetProperty("Total", out var total) && total.TryGetInt64(out var n) ? n : 0,
        Message = result.TryGetProperty("Message", out var message) ? message.GetString() : null,
        ErrorType = result.TryGetProperty("Type", out var type) ? type.GetString() : null,
        StatusCode = result.TryGetProperty("StatusCode", out var status) && status.TryGetInt32(out var code) ? code : null,
    };
}
