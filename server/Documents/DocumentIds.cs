using System.Buffers;
using System.Text;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Document ids: any Unicode string of 1 to <see cref="MaxLength"/> UTF-16 characters without control
/// characters or unpaired surrogates. Ids compare case-insensitively: the storage key is the
/// invariant lower-case form in UTF-8, at most <see cref="MaxKeyBytes"/> bytes; the casing first
/// written is kept in the document's metadata.
/// An id ending in <c>/</c> is completed by the server with a unique, sortable suffix; an id ending
/// in <c>|</c> takes the next value of a per-prefix identity counter.
/// </summary>
public static class DocumentIds
{
    public const int MaxLength = 512;
    public const int MaxKeyBytes = 1024;

    private static readonly SearchValues<char> ControlCharacters = SearchValues.Create(
        "\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u0009\u000A\u000B\u000C\u000D\u000E\u000F" +
        "\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001A\u001B\u001C\u001D\u001E\u001F\u007F");

    public enum IdKind : byte
    {
        Exact,
        ServerGenerated,
        Identity,
    }

    /// <summary>Checks an id as given by a client. Returns null when valid, else a message naming the problem.</summary>
    public static string? Validate(ReadOnlySpan<char> id)
    {
        if (id.IsEmpty)
        {
            return "The document id is empty.";
        }
        if (id.Length > MaxLength)
        {
            return $"The document id is {id.Length} characters long; the maximum is {MaxLength}.";
        }
        var control = id.IndexOfAny(ControlCharacters);
        if (control >= 0)
        {
            return $"The document id has a control character (U+{(int)id[control]:X4}) at position {control}.";
        }
        var surrogate = id.IndexOfAnyInRange('\ud800', '\udfff');
        while (surrogate >= 0 && surrogate < id.Length)
        {
            if (Rune.DecodeFromUtf16(id[surrogate..], out _, out var consumed) != OperationStatus.Done)
            {
                return $"The document id has an unpaired surrogate character at position {surrogate}.";
            }
            surrogate += consumed;
        }
        // The storage key is the lowercased UTF-8 form; its length is what the B+Tree bounds.
        Span<byte> key = stackalloc byte[MaxKeyBytes];
        if (GetKey(id, key) < 0)
        {
            return $"The document id is longer than {MaxKeyBytes} bytes in UTF-8.";
        }
        return null;
    }

    /// <summary>The storage key of an id into <paramref name="destination"/>; a 400 error when it is too long.</summary>
    public static int GetKeyOrThrow(string id, Span<byte> destination)
    {
        var length = GetKey(id, destination);
        if (length < 0)
        {
            throw new Errors.BadRequestException($"The document id '{id}' is longer than {MaxKeyBytes} bytes in UTF-8.");
        }
        return length;
    }

    /// <summary>The storage-key form of an id prefix (invariant lower case, UTF-8): every id that starts with <paramref name="prefix"/> (any casing) has a key that starts with it.</summary>
    public static byte[] KeyPrefix(string prefix) => Encoding.UTF8.GetBytes(prefix.ToLowerInvariant());

    public static IdKind KindOf(ReadOnlySpan<char> id) => id.IsEmpty ? IdKind.Exact : id[^1] switch
    {
        '/' => IdKind.ServerGenerated,
        '|' => IdKind.Identity,
        _ => IdKind.Exact,
    };

    /// <summary>
    /// Writes the storage key of <paramref name="id"/> (invariant lower case, UTF-8) into
    /// <paramref name="destination"/>; returns its length, or -1 if it exceeds <see cref="MaxKeyBytes"/>
    /// or the destination.
    /// </summary>
    public static int GetKey(ReadOnlySpan<char> id, Span<byte> destination)
    {
        if (Ascii.IsValid(id))
        {
            if (id.Length > destination.Length || id.Length > MaxKeyBytes)
            {
                return -1;
            }
            Ascii.ToLower(id, destination, out var written);
            return written;
        }

        Span<char> lower = id.Length <= 256 ? stackalloc char[id.Length] : new char[id.Length];
        id.ToLowerInvariant(lower);
        var status = System.Text.Unicode.Utf8.FromUtf16(lower, destination, out _, out var bytes, replaceInvalidSequences: false);
        return status == OperationStatus.Done && bytes <= MaxKeyBytes ? bytes : -1;
    }

    /// <summary>The storage key as a new array (cold paths and tests).</summary>
    public static byte[] GetKey(string id)
    {
        var buffer = new byte[Encoding.UTF8.GetMaxByteCount(id.Length)];
        var length = GetKey(id, buffer);
        if (length < 0)
        {
            throw new ArgumentException($"The document id '{id}' is longer than {MaxKeyBytes} bytes in UTF-8.", nameof(id));
        }
        return buffer[..length];
    }

    /// <summary>
    /// Completes an id ending in <c>/</c>: the prefix plus the etag, zero-padded to 19 digits so
    /// generated ids sort in creation order, plus the node tag (<c>users/0000000000000000042-A</c>).
    /// </summary>
    public static string CompleteServerGenerated(ReadOnlySpan<char> prefix, long etag, string nodeTag = ChangeVectors.DefaultTag) =>
        string.Create(null, stackalloc char[64], $"{prefix}{etag:D19}-{nodeTag}");

    /// <summary>Completes an id ending in <c>|</c>: <c>invoices|</c> with value 7 is <c>invoices/7</c>.</summary>
    public static string CompleteIdentity(ReadOnlySpan<char> idWithPipe, long value) =>
        string.Create(null, stackalloc char[64], $"{idWithPipe[..^1]}/{value}");
}
