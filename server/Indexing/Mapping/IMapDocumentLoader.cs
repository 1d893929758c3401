namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>Documents a map may <c>load(id)</c>: the same snapshot the batch reads.</summary>
public interface IMapDocumentLoader
{
    /// <summary>The document with <paramref name="id"/>, or null when it does not exist.</summary>
    MapInput? Load(string id);
}
