namespace Jackdaw.Storage.Blittable;

/// <summary>How a document is built.</summary>
public enum BlittableMode
{
    /// <summary>For JSON used once (index definitions, query bodies): no compression, numbers kept unvalidated.</summary>
    Memory,

    /// <summary>For stored documents: strings compressed when that is smaller, numbers validated as finite.</summary>
    Disk,
}

/// <summary>The JSON type of a blittable value.</summary>
public enum BlittableToken : byte
{
    Null,
    True,
    False,
    Integer,
    Double,
    String,
    Object,
    Array,
}
