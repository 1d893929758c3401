using System.Buffers;
using System.Text;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Wire;

/// <summary>
/// What <c>GET /streams/docs</c> asks for (RavenDB's parameters): with a non-empty
/// <paramref name="StartsWith"/>, the documents whose id starts with it, in id order, after
/// <paramref name="StartAfter"/> when given; otherwise every document, newest change first. In
/// both, <paramref name="Matches"/> and <paramref name="Exclude"/> filter on the id after the
/// prefix, then <paramref name="Start"/> results are skipped and at most
/// <paramref name="PageSize"/> returned.
/// </summary>
public sealed record DocumentStreamRequest(string? StartsWith, IdPattern? Matches, IdPattern? Exclude, string? StartAfter, long Start, long PageSize);

/// <summary>
/// Streams documents without holding them, nor a snapshot across the network: documents are
/// copied out of the read transaction as they are read, and once <see cref="StreamResultsWriter.FlushThreshold"/>
/// is buffered the snapshot is closed, the output flushed (waiting for a slow client without
/// pinning the store's old page versions) and reading resumes in a fresh snapshot after the last
/// key or etag written. Like RavenDB's pulsed read transactions, a stream is therefore not one
/// snapshot: a document changed while it runs may be seen at its new version, or (newest first)
/// after its old position and so not at all; in id order each id appears at most once.
/// </summary>
public static class DocumentStream
{
    public static async ValueTask WriteAsync(StreamResultsWriter output, DocumentDatabase database, DocumentStreamRequest request, CancellationToken cancellationToken)
    {
        var position = new Position(request);
        var reader = database.BeginRead();
        try
        {
            output.StartDocuments();
            while (WriteSome(output, reader, request, position))
            {
                reader.Dispose();
                reader = null;
                if (!await output.FlushAsync(cancellationToken).ConfigureAwait(false))
                {
                    return;
                }
                reader = database.BeginRead();
            }
            output.End();
        }
        catch (Exception e) when (output.ReportsInStream(e, cancellationToken))
        {
            reader?.Dispose();
            reader = null;
            await output.WriteErrorAsync(e.Message, cancellationToken).ConfigureAwait(false);
            throw;
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested)
        {
            // The client went away (a reset may surface as an I/O error, not a cancellation):
            // nobody to answer and nothing to log.
            return;
        }
        finally
        {
            reader?.Dispose();
            position.Dispose();
        }
        await output.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Writes results until the output should be flushed (true: more may follow) or the stream is done (false).</summary>
    private static bool WriteSome(StreamResultsWriter output, DocumentsReader reader, DocumentStreamRequest request, Position position)
    {
        if (position.Prefix is { } prefix)
        {
            using var documents = reader.GetDocumentsById(prefix, position.AfterKey).GetEnumerator();
            while (documents.MoveNext())
            {
                if (!position.Take(documents.Current, request))
                {
                    continue;
                }
                if (position.Done)
                {
                    return false;
                }
                output.WriteDocument(documents.Current.Document);
                position.Written++;
                if (output.ShouldFlush)
                {
                    position.SetAfterKey(documents.CurrentKey);
                    return true;
                }
            }
            return false;
        }

        foreach (var document in reader.GetDocumentsNewestFirst(position.BeforeEtag))
        {
            if (!position.Take(document, request))
            {
                continue;
            }
            if (position.Done)
            {
                return false;
            }
            output.WriteDocument(document.Document);
            position.Written++;
            if (output.ShouldFlush)
            {
                position.BeforeEtag = document.Etag;
                return true;
            }
        }
        return false;
    }

    /// <summary>Where a stream stands between snapshots, and the counting of skip and page size.</summary>
    private sealed class Position : IDisposable
    {
        private readonly int _prefixChars;
        private byte[] _afterKey;
        private int _afterKeyLength;
        private char[] _id = ArrayPool<char>.Shared.Rent(64);
        private long _toSkip;

        public Position(DocumentStreamRequest request)
        {
            _toSkip = request.Start;
            _afterKey = ArrayPool<byte>.Shared.Rent(DocumentIds.MaxKeyBytes);
            if (!string.IsNullOrEmpty(request.StartsWith))
            {
                Prefix = DocumentIds.KeyPrefix(request.StartsWith);
                _prefixChars = request.StartsWith.Length;
                if (!string.IsNullOrEmpty(request.StartAfter))
                {
                    SetAfterKey(DocumentIds.KeyPrefix(request.StartAfter));
                }
            }
        }

        /// <summary>The storage-key prefix in id order; null when streaming newest first.</summary>
        public byte[]? Prefix { get; }

        public ReadOnlySpan<byte> AfterKey => _afterKey.AsSpan(0, _afterKeyLength);

        public long BeforeEtag { get; set; } = long.MaxValue;

        public long Written { get; set; }

        public bool Done { get; private set; }

        public void SetAfterKey(ReadOnlySpan<byte> key)
        {
            if (key.Length > _afterKey.Length)
            {
                ArrayPool<byte>.Shared.Return(_afterKey);
                _afterKey = ArrayPool<byte>.Shared.Rent(key.Length);
            }
            key.CopyTo(_afterKey);
            _afterKeyLength = key.Length;
        }

        /// <summary>Whether the document passes the filters and the skip; sets <see cref="Done"/> once the page is full.</summary>
        public bool Take(in DocumentRecord document, DocumentStreamRequest request)
        {
            if (request.Matches is not null || request.Exclude is not null)
            {
                var rest = IdAfterPrefix(document.IdUtf8);
                if (request.Matches is { } matches && !matches.Matches(rest))
                {
                    return false;
                }
                if (request.Exclude is { } exclude && exclude.Matches(rest))
                {
                    return false;
                }
            }
            if (_toSkip > 0)
            {
                _toSkip--;
                return false;
            }
            Done = Written >= request.PageSize;
            return true;
        }

        /// <summary>The id without the prefix (which it starts with, in some casing), decoded into a reused buffer.</summary>
        private ReadOnlySpan<char> IdAfterPrefix(ReadOnlySpan<byte> idUtf8)
        {
            var needed = Encoding.UTF8.GetMaxCharCount(idUtf8.Length);
            if (needed > _id.Length)
            {
                ArrayPool<char>.Shared.Return(_id);
                _id = ArrayPool<char>.Shared.Rent(needed);
            }
            var length = Encoding.UTF8.GetChars(idUtf8, _id);
            return _id.AsSpan(Math.Min(_prefixChars, length), length - Math.Min(_prefixChars, length));
        }

        public void Dispose()
        {
            ArrayPool<byte>.Shared.Return(_afterKey);
            ArrayPool<char>.Shared.Return(_id);
        }
    }
}
