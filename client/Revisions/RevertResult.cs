namespace Jackdaw.Client;

/// <summary>What a <see cref="RevertRevisionsOperation"/> did (RavenDB's <c>RevertResult</c>), read with <see cref="Operation.WaitForCompletionAsync{TResult}(TimeSpan?, CancellationToken)"/>.</summary>
public sealed class RevertResult
{
    public long ScannedRevisions { get; init; }

    public long ScannedDocuments { get; init; }

    public long RevertedDocuments { get; init; }

    /// <summary>Documents it could not revert, by id, and why.</summary>
    public Dictionary<string, string>? Warnings { get; init; }
}
