namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>A field of an auto-index: a document path, as a query names it, and how it is indexed.</summary>
public sealed record AutoIndexField(string Path, FieldIndexing Indexing)
{
    /// <summary>The name the field has in RavenDB's auto-index names and definitions: <c>Name</c>, <c>search(Name)</c>, <c>exact(Name)</c>.</summary>
    public string Key => Indexing switch
    {
        FieldIndexing.Search => $"search({Path})",
        FieldIndexing.Exact => $"exact({Path})",
        _ => Path,
    };

    /// <summary>The Lucene field its string terms go to (one path may be indexed several ways).</summary>
    public string LuceneName => Indexing switch
    {
        FieldIndexing.Search => Path + "@search",
        FieldIndexing.Exact => Path + "@exact",
        _ => Path,
    };
}
