using System.Linq.Expressions;
using System.Reflection;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace Jackdaw.Client.Conventions;

/// <summary>
/// Everything the client needs about an entity type, computed once per type (reflection and
/// expression compilation happen here, never on a load or save).
/// </summary>
internal sealed class EntityTypeInfo
{
    private EntityTypeInfo(Type type, JsonTypeInfo jsonTypeInfo, string collection, string idPrefix, string clrTypeName, Func<object, string?>? getId, Action<object, string?>? setId, byte[]? idJsonName)
    {
        Type = type;
        JsonTypeInfo = jsonTypeInfo;
        Collection = collection;
        IdPrefix = idPrefix;
        ClrTypeName = clrTypeName;
        ClrTypeNameUtf8 = Encoding.UTF8.GetBytes(clrTypeName);
        GetId = getId;
        SetId = setId;
        IdJsonName = idJsonName;
        var metadata = new System.Buffers.ArrayBufferWriter<byte>(128);
        using (var writer = new Utf8JsonWriter(metadata))
        {
            writer.WriteStartObject();
            writer.WriteString(MetadataKeys.Collection, collection);
            writer.WriteString(MetadataKeys.ClrType, clrTypeName);
            writer.WriteEndObject();
        }

        DefaultMetadataJson = metadata.WrittenSpan.ToArray();
    }

    public Type Type { get; }

    public JsonTypeInfo JsonTypeInfo { get; }

    public string Collection { get; }

    /// <summary>Prefix ending with <c>/</c> that asks the server to complete the id, e.g. <c>users/</c>.</summary>
    public string IdPrefix { get; }

    public string ClrTypeName { get; }

    /// <summary><see cref="ClrTypeName"/> in UTF-8, to recognize it in loaded metadata without decoding a string.</summary>
    public byte[] ClrTypeNameUtf8 { get; }

    /// <summary>Reads the id property; null when the type has no string id property.</summary>
    public Func<object, string?>? GetId { get; }

    /// <summary>Writes the id property; null when it has no setter.</summary>
    public Action<object, string?>? SetId { get; }

    /// <summary>
    /// UTF-8 JSON name of the id property at the document's top level. The id lives in
    /// <c>@metadata.@id</c>, so this property is left out of the stored body and set from
    /// <c>@id</c> on load.
    /// </summary>
    public byte[]? IdJsonName { get; }

    /// <summary><c>{"@collection":...,"Jackdaw-Clr-Type":...}</c>, encoded once.</summary>
    public byte[] DefaultMetadataJson { get; }

    public static EntityTypeInfo Create(Type type, DocumentConventions conventions)
    {
        var jsonTypeInfo = conventions.SerializerOptions.GetTypeInfo(type);
        if (jsonTypeInfo.Kind != JsonTypeInfoKind.Object)
        {
            throw new InvalidOperationException(
                $"{type.FullName} cannot be stored as a document: it serializes as a JSON {jsonTypeInfo.Kind}, and a document must be a JSON object. Wrap it in a class.");
        }

        var collection = conventions.FindCollectionName(type);
        var idPrefix = conventions.TransformCollectionNameToDocumentIdPrefix(collection);
        var clrTypeName = conventions.FindClrTypeName(type);

        Func<object, string?>? getId = null;
        Action<object, string?>? setId = null;
        byte[]? idJsonName = null;
        var member = FindIdMember(type, conventions.IdPropertyName);
        if (member is not null)
        {
            (getId, setId) = CompileAccessors(type, member);
            var jsonProperty = jsonTypeInfo.Properties.FirstOrDefault(p => p.AttributeProvider is MemberInfo m && m.Name == member.Name);
            if (jsonProperty is not null)
            {
                idJsonName = Encoding.UTF8.GetBytes(jsonProperty.Name);
            }
        }

        return new EntityTypeInfo(type, jsonTypeInfo, collection, idPrefix, clrTypeName, getId, setId, idJsonName);
    }

    private static MemberInfo? FindIdMember(Type type, string name)
    {
        const BindingFlags Flags = BindingFlags.Public | BindingFlags.Instance;
        var property = type.GetProperty(name, Flags);
        if (property is not null && property.PropertyType == typeof(string) && property.GetIndexParameters().Length == 0 && property.GetMethod is not null)
        {
            return property;
        }
        var field = type.GetField(name, Flags);
        return field is not null && field.FieldType == typeof(string) ? field : null;
    }

    private static (Func<object, string?> Get, Action<object, string?>? Set) CompileAccessors(Type type, MemberInfo member)
    {
        var instance = Expression.Parameter(typeof(object), "entity");
        var typed = type.IsValueType ? (Expression)Expression.Unbox(instance, type) : Expression.Convert(instance, type);
        var access = Expression.MakeMemberAccess(typed, member);
        var get = Expression.Lambda<Func<object, string?>>(access, instance).Compile();

        // Structs are boxed copies here: writing into one would be lost, so they get no setter.
        var writable = !type.IsValueType && member switch
        {
            PropertyInfo p => p.SetMethod is not null,
            FieldInfo f => !f.IsInitOnly,
            _ => false,
        };
        if (!writable)
        {
            return (get, null);
        }
        var value = Expression.Parameter(typeof(string), "id");
        var set = Expression.Lambda<Action<object, string?>>(Expression.Assign(Expression.MakeMemberAccess(typed, member), value), instance, value).Compile();
        return (get, set);
    }
}
