using System.Globalization;
using System.Text;
using System.Text.Json;
using Jackdaw.Storage.Blittable;
using Jint;
using Jint.Native;
using Jint.Native.Array;
using Jint.Native.Object;
using Jint.Runtime;
using Jint.Runtime.Descriptors;

namespace Jackdaw.Server.Patching;

/// <summary>
/// Documents into JavaScript objects and back. A patch rewrites the document it is given, so the
/// whole document is read at once into ordinary Jint objects (unlike an index map, which reads
/// lazily: see Indexing/JavaScript/BlittableObjectInstance.cs), and written back to JSON from
/// them without going through text on the way in.
/// </summary>
/// <remarks>
/// Numbers are JavaScript's: an integer stays an integer when it is one within ±2^53, anything
/// else is a double (a stored 2^63-1 comes back as 2^63, as from RavenDB). NaN and the infinities
/// are null, undefined and functions leave their property out (null in an array), a <c>Date</c> is
/// its ISO-8601 UTC text.
/// </remarks>
internal static class PatchJson
{
    /// <summary>Deepest nesting written back: deeper is a document that holds itself.</summary>
    public const int MaxDepth = 64;

    private const double MaxSafeInteger = 9007199254740992d;

    public static ObjectInstance FromBlittable(Engine engine, ReadOnlySpan<byte> blittable) =>
        FromObject(engine, BlittableReader.Open(blittable));

    private static ObjectInstance FromObject(Engine engine, BlittableObject obj)
    {
        var result = new JsObject(engine);
        for (var i = 0; i < obj.Count; i++)
        {
            var name = Encoding.UTF8.GetString(obj.GetNameAt(i));
            result.FastSetDataProperty(name, FromValue(engine, obj.GetValueAt(i)));
        }
        return result;
    }

    private static JsValue FromValue(Engine engine, BlittableValue value)
    {
        switch (value.Type)
        {
            case BlittableToken.Null:
                return JsValue.Null;
            case BlittableToken.True:
                return JsBoolean.True;
            case BlittableToken.False:
                return JsBoolean.False;
            case BlittableToken.Integer:
                return value.TryGetInt64(out var integer) ? JsNumber.Create(integer) : JsNumber.Create(value.TryGetDouble(out var big) ? big : double.NaN);
            case BlittableToken.Double:
                return value.TryGetDouble(out var number) ? JsNumber.Create(number) : JsValue.Null;
            case BlittableToken.String:
                return new JsString(value.GetString() ?? string.Empty);
            case BlittableToken.Object:
                return FromObject(engine, value.GetObject());
            default:
                var array = value.GetArray();
                var items = new JsValue[array.Length];
                for (var i = 0; i < items.Length; i++)
                {
                    items[i] = FromValue(engine, array[i]);
                }
                return new JsArray(engine, items);
        }
    }

    /// <summary>Writes <paramref name="value"/> (an object) as JSON.</summary>
    /// <exception cref="Errors.PatchScriptException">It nests deeper than <see cref="MaxDepth"/>.</exception>
    public static void Write(Utf8JsonWriter writer, JsValue value, string id) => WriteValue(writer, value, 0, id);

    private static void WriteValue(Utf8JsonWriter writer, JsValue value, int depth, string id)
    {
        switch (value.Type)
        {
            case Types.Boolean:
                writer.WriteBooleanValue(value.AsBoolean());
                return;
            case Types.Number:
                WriteNumber(writer, value.AsNumber());
                return;
            case Types.String:
                writer.WriteStringValue(value.AsString());
                return;
            case Types.Object when value is JsDate date:
                if (date.DateValue is var time && double.IsFinite(time))
                {
                    writer.WriteStringValue(DateTimeOffset.FromUnixTimeMilliseconds((long)time).UtcDateTime.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", CultureInfo.InvariantCulture));
                }
                else
                {
                    writer.WriteNullValue();
                }
                return;
            case Types.Object when !value.IsCallable():
                if (depth >= MaxDepth)
                {
                    throw new Errors.PatchScriptException($"Patch of '{id}': the document nests deeper than {MaxDepth} levels (does it hold itself?).");
                }
                if (value is ArrayInstance array)
                {
                    writer.WriteStartArray();
                    var length = (uint)TypeConverter.ToLength(array.Get("length"));
                    for (uint i = 0; i < length; i++)
                    {
                        var item = array.Get(i);
                        if (Omitted(item))
                        {
                            writer.WriteNullValue();
                        }
                        else
                        {
                            WriteValue(writer, item, depth + 1, id);
                        }
                    }
                    writer.WriteEndArray();
                    return;
                }
                WriteObject(writer, (ObjectInstance)value, depth, id);
                return;
            default:
                writer.WriteNullValue();
                return;
        }
    }

    private static void WriteObject(Utf8JsonWriter writer, ObjectInstance obj, int depth, string id)
    {
        writer.WriteStartObject();
        foreach (var (key, descriptor) in obj.GetOwnProperties())
        {
            if (!key.IsString() || !descriptor.Enumerable)
            {
                continue;
            }
            var item = descriptor.IsDataDescriptor() ? descriptor.Value : obj.Get(key);
            if (Omitted(item))
            {
                continue;
            }
            writer.WritePropertyName(key.AsString());
            WriteValue(writer, item, depth + 1, id);
        }
        writer.WriteEndObject();
    }

    private static bool Omitted(JsValue value) => value.IsUndefined() || value.IsCallable() || value.Type == Types.Symbol;

    private static void WriteNumber(Utf8JsonWriter writer, double number)
    {
        if (!double.IsFinite(number))
        {
            writer.WriteNullValue();
        }
        else if (Math.Abs(number) <= MaxSafeInteger && number == Math.Floor(number))
        {
            // -0 too: JSON has no negative zero.
            writer.WriteNumberValue((long)number);
        }
        else
        {
            writer.WriteNumberValue(number);
        }
    }

    /// <summary>The <c>@metadata.@collection</c> of a document object, or null.</summary>
    public static string? CollectionOf(JsValue document) =>
        document is ObjectInstance obj && obj.Get("@metadata") is ObjectInstance metadata && metadata.Get("@collection") is { } collection && collection.IsString()
            ? collection.AsString()
            : null;

    /// <summary>The <c>@metadata.@id</c> of a document object, or null.</summary>
    public static string? IdOf(JsValue document) =>
        document is ObjectInstance obj && obj.Get("@metadata") is ObjectInstance metadata && metadata.Get("@id") is { } id && id.IsString()
            ? id.AsString()
            : null;
}
