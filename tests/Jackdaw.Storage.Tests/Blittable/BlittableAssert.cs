using System.Globalization;
using System.Text;
using System.Text.Json;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

/// <summary>Compares a blittable object with System.Text.Json's reading of the same text.</summary>
internal static class BlittableAssert
{
    public static void Equal(JsonElement expected, BlittableObject actual, byte[] scratch, string where)
    {
        Assert.True(expected.ValueKind == JsonValueKind.Object, where);
        var count = 0;
        var index = 0;
        foreach (var property in expected.EnumerateObject())
        {
            count++;
            var name = Encoding.UTF8.GetBytes(property.Name);
            Assert.True(actual.GetNameAt(index).SequenceEqual(name), $"{where}: name {index} is not {property.Name}");
            Assert.True(actual.TryGet(name, out var byName), $"{where}: TryGet({property.Name}) failed");
            Assert.Equal(index, actual.IndexOf(name));
            ValueEqual(property.Value, byName, scratch, where + "." + property.Name);
            index++;
        }

        Assert.Equal(count, actual.Count);
    }

    public static void ValueEqual(JsonElement expected, BlittableValue actual, byte[] scratch, string where)
    {
        switch (expected.ValueKind)
        {
            case JsonValueKind.Null:
                Assert.Equal(BlittableToken.Null, actual.Type);
                break;
            case JsonValueKind.True:
                Assert.True(actual.GetBoolean(), where);
                break;
            case JsonValueKind.False:
                Assert.False(actual.GetBoolean(), where);
                break;
            case JsonValueKind.String:
                Assert.Equal(BlittableToken.String, actual.Type);
                Assert.True(actual.TryGetUtf8(scratch, out var written), where);
                Assert.True(expected.ValueEquals(scratch.AsSpan(0, written)), where);
                Assert.True(actual.ValueEquals(scratch.AsSpan(0, written)), where);
                break;
            case JsonValueKind.Number:
                if (expected.TryGetInt64(out var integer) && actual.Type == BlittableToken.Integer)
                {
                    Assert.True(actual.TryGetInt64(out var got), where);
                    Assert.Equal(integer, got);
                }
                else
                {
                    Assert.Equal(BlittableToken.Double, actual.Type);
                    Assert.True(actual.TryGetNumberText(out var text), where);
                    Assert.Equal(expected.GetRawText(), Encoding.ASCII.GetString(text));
                    Assert.True(actual.TryGetDouble(out var d), where);
                    Assert.Equal(double.Parse(expected.GetRawText(), CultureInfo.InvariantCulture), d);
                }

                break;
            case JsonValueKind.Object:
                Equal(expected, actual.GetObject(), scratch, where);
                break;
            case JsonValueKind.Array:
                var array = actual.GetArray();
                Assert.Equal(expected.GetArrayLength(), array.Length);
                var i = 0;
                foreach (var item in expected.EnumerateArray())
                {
                    ValueEqual(item, array[i], scratch, $"{where}[{i}]");
                    i++;
                }

                break;
        }
    }
}
