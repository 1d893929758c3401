using Jackdaw.Server.Documents;
using Jackdaw.Server.Rql;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Queries;

/// <summary>
/// What a query's <c>include revisions(...)</c>, or a load's <c>&amp;revisions=</c> and
/// <c>&amp;revisionsBefore=</c>, asks for, collected from its results as they are written: for a
/// point in time, each result's id (its newest revision at or before that time is included); for a
/// path, the change vectors the path reaches in each result. The answer writes them under
/// <c>RevisionIncludes</c> (Wire), as RavenDB's clients read it.
/// </summary>
public sealed class RevisionIncludes
{
    private readonly IReadOnlyList<RqlRevisionsInclude> _includes;

    private RevisionIncludes(IReadOnlyList<RqlRevisionsInclude> includes) => _includes = includes;

    /// <summary>The collector of a load (RavenDB's <c>GET /docs?id=…&amp;revisions=path&amp;revisionsBefore=date</c>), or null when it includes no revisions.</summary>
    public static RevisionIncludes? For(IReadOnlyList<DocumentPath>? paths, DateTime? before)
    {
        var includes = new List<RqlRevisionsInclude>();
        foreach (var path in paths ?? [])
        {
            includes.Add(new RqlRevisionsInclude(null, path, 0));
        }
        if (before is { } at)
        {
            includes.Add(new RqlRevisionsInclude(at, null, 0));
        }
        return includes.Count == 0 ? null : new RevisionIncludes(includes);
    }

    /// <summary>Change vectors to include, in the order first met.</summary>
    public List<string> ChangeVectors { get; } = [];

    /// <summary>Ids with the point in time whose revision to include, each pair once.</summary>
    public List<(string Id, DateTime Before)> Before { get; } = [];

    private readonly HashSet<string> _seenChangeVectors = new(StringComparer.Ordinal);
    private readonly HashSet<(string, DateTime)> _seenBefore = [];

    /// <summary>The collector of a query, or null when it includes no revisions.</summary>
    public static RevisionIncludes? For(RqlQuery query) => query.IncludeRevisions.Count == 0 ? null : new RevisionIncludes(query.IncludeRevisions);

    /// <summary>Takes what one result (a stored document) asks to include.</summary>
    public void Collect(string id, ReadOnlySpan<byte> document)
    {
        foreach (var include in _includes)
        {
            if (include.Before is { } before)
            {
                if (_seenBefore.Add((id, before)))
                {
                    Before.Add((id, before));
                }
            }
            else if (include.Path is { } path)
            {
                var collector = new ChangeVectorCollector(this);
                path.Walk(document, ref collector);
            }
        }
    }

    private void AddChangeVector(string changeVector)
    {
        if (_seenChangeVectors.Add(changeVector))
        {
            ChangeVectors.Add(changeVector);
        }
    }

    private readonly struct ChangeVectorCollector(RevisionIncludes owner) : IDocumentPathVisitor
    {
        public bool Leaf(PathLeaf leaf)
        {
            if (leaf.Kind == PathLeafKind.String && leaf.GetString() is { Length: > 0 } changeVector)
            {
                owner.AddChangeVector(changeVector);
            }
            return true;
        }

        public void EnterArray()
        {
        }

        public void LeaveArray()
        {
        }
    }
}
