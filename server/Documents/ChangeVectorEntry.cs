namespace Jackdaw.Server.Documents;

/// <summary>
/// One entry of a change vector, <c>{tag}:{etag}-{database id}</c>: the etag of the last change
/// of a document made by one copy of the database (its id) on one node (its tag).
/// </summary>
public readonly record struct ChangeVectorEntry(string Tag, long Etag, string DatabaseId)
{
    public override string ToString() => string.Create(System.Globalization.CultureInfo.InvariantCulture, $"{Tag}:{Etag}-{DatabaseId}");
}
