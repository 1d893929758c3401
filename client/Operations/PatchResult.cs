using System.Text.Json;

namespace Jackdaw.Client;

/// <summary>The answer of <see cref="DocumentOperations.PatchAsync"/>: the status, and the document as stored after the patch (null when there is none).</summary>
public sealed class PatchResult
{
    public PatchStatus Status { get; init; }

    /// <summary>The patched document (its JSON, <c>@metadata</c> included); null for <see cref="PatchStatus.DocumentDoesNotExist"/> and <see cref="PatchStatus.Skipped"/>.</summary>
    public JsonElement? ModifiedDocument { get; init; }

    /// <summary>The new version's change vector when the document was written.</summary>
    public string? ChangeVector { get; init; }

    /// <summary>The <c>Debug</c> object of a test or debug run: <c>{"Info":[...],"Actions":{...}}</c>.</summary>
    public JsonElement? Debug { get; init; }

    /// <summary>The document before the patch, for a test run.</summary>
    public JsonElement? OriginalDocument { get; init; }

    /// <summary>The patched document as <typeparamref name="T"/>, or default when there is none.</summary>
    public T? Document<T>() => ModifiedDocument is { } document ? document.Deserialize<T>(Json.WireJson.Options) : default;
}
